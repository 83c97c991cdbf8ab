// The --down-peer config field: a peer apiserver address (grammar in decide-peer-address.ts).
import { textField, Refused } from '../config/fields.ts';
import { printable } from '../watch/vip-address.ts';
import { checkPeer } from './decide-peer-address.ts';

/** A config field (flag or YAML): a peer address, in canonical form. */
export const peerAddress = textField((text): string | Refused => {
  const r = checkPeer(text);
  return r.ok ? r.peer : new Refused(`"${printable(text)}" ${r.reason}; give another control-plane node's address such as 10.0.2.12`);
}, 'expected an IP address');
