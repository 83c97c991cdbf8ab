// Writes deploy/monitoring/kubeward-prometheusrule.yaml from kubeward-alerts.rules.yaml: the same
// groups, wrapped for the Prometheus Operator. test/deploy/monitoring.test.ts fails when they differ.
//   node scripts/gen-prometheusrule.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';

const dir = join(import.meta.dirname, '../deploy/monitoring');
const rules = YAML.parse(readFileSync(join(dir, 'kubeward-alerts.rules.yaml'), 'utf8'));
const rule = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: { name: 'kubeward-alerts', labels: { 'app.kubernetes.io/part-of': 'kubeward', role: 'alert-rules' } },
  spec: { groups: rules.groups },
};
const head = [
  '# The alert rules of kubeward-alerts.rules.yaml as a Prometheus Operator PrometheusRule (apply it in',
  '# the namespace your Prometheus selects rules from; match its ruleSelector labels). Generated from the',
  '# rules file: node scripts/gen-prometheusrule.mjs; test/deploy/monitoring.test.ts fails when they differ.',
  '',
].join('\n');
writeFileSync(join(dir, 'kubeward-prometheusrule.yaml'), head + YAML.stringify(rule, { lineWidth: 0 }));
