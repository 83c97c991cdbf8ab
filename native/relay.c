/*
 * kubeward's byte pump in C (--relay native): moves the bytes of established client-upstream pairs
 * on Node's own libuv loop without entering JavaScript per chunk. JavaScript hands over the two
 * connected sockets (this file dup()s their fds; the caller then closes its libuv handles, which
 * takes their fds out of epoll and closes them, so each dup is polled by one watcher only) and is
 * called back once per connection when it ends, and at the first bytes of each direction while
 * the first-byte watch is on. Counters are read on demand.
 *
 * Per chunk: one recv() into a buffer shared by every connection of the loop, one send() to the
 * other socket. Only what the other socket did not take (a short send or EAGAIN) is copied, into a
 * buffer of that connection sized to the residue; then the source is not read until the residue is
 * out (backpressure), and an idle connection holds no data buffer. A FIN is passed on as
 * shutdown(SHUT_WR) once the residue is out, and the other direction keeps flowing; an error or a
 * reset closes both sockets. Both sockets are closed once, by finish().
 *
 * Behaviour follows the handle relay (src/proxy/relay/handle-relay.ts), which follows Node's net.Socket.
 * The loop calls follow libuv's uv_poll (include/uv.h): uv_poll_start on a changed event set only
 * (libuv re-registers the fd with epoll on every call), uv_close before the fd is closed.
 *
 * The same addon carries the listener hand-over's calls (sendmsg/recvmsg with SCM_RIGHTS,
 * SO_PEERCRED; src/handover/handover-addon.ts), at the end of this file.
 *
 * C only, Node-API and libuv only. Built by scripts/build-native.ts.
 */
#define NAPI_VERSION 8
#include <node_api.h>
#include <uv.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define CLIENT 0
#define UPSTREAM 1

/* At most this many reads per readiness event and direction, as libuv's uv__read (32) bounds it:
 * a fast source cannot starve the loop. */
#define MAX_READS_PER_EVENT 16

/* Direction state, indexed by source leg. */
#define D_EOF 1  /* the source sent FIN */
#define D_SHUT 2 /* our FIN to the destination is out (or the destination is gone) */

/* Connection flags. */
#define F_ACTIVE 1  /* a byte moved since the idle sweep last cleared it */
#define F_WATCH 2   /* first-byte watch on: tell JavaScript about the first bytes */
#define F_ARMED 4   /* the client's first bytes were reported */
#define F_CLOSING 8 /* finish() ran: the polls are closing, the fds are closed */

/* Why a connection ended (the `reason` of the end event). */
#define END_EOF 0       /* both directions finished with a FIN */
#define END_ERROR 1     /* a read, write or shutdown failed (reset, ...) */
#define END_DESTROYED 2 /* JavaScript asked (idle timeout, drain, shutdown) */

/* Event kinds passed to JavaScript's callback. */
#define EV_END 0
#define EV_CLIENT_FIRST 1
#define EV_UPSTREAM_FIRST 2

typedef struct relay_instance relay_instance;
typedef struct relay_conn relay_conn;

typedef struct {
  uv_poll_t poll;
  int fd;
  int events; /* what the poll watches now (UV_READABLE | UV_WRITABLE) */
} relay_leg;

struct relay_conn {
  relay_leg legs[2];
  relay_instance* inst;
  /* Bytes read from legs[d] and not yet written to legs[1 - d]; NULL when none. */
  char* residue[2];
  uint32_t residue_off[2];
  uint32_t residue_len[2];
  /* Bytes read from legs[d] (and passed on, or in residue[d]). */
  double moved[2];
  uint32_t slot;
  uint8_t dir[2];
  uint8_t flags;
  uint8_t reason;
  uint8_t open_polls;
};

struct relay_instance {
  napi_env env;
  uv_loop_t* loop;
  napi_ref on_event;
  napi_ref resource;
  napi_async_context async_context;
  char* buf;
  size_t buf_bytes;
  relay_conn** slots;
  uint32_t* free_slots;
  uint32_t nfree;
  uint32_t nslots;
  uint32_t cap;
  uint32_t live;
};

static void update_events(relay_conn* c, int leg);
static void finish(relay_conn* c, int reason);
static void on_poll(uv_poll_t* p, int status, int events);

/* ---- calls into JavaScript -------------------------------------------------------------------- */

/* Calls the event callback (slot, kind, a, b, c). A throw is cleared: no peer may crash the
 * process, and the JavaScript side catches its own faults before they get here. */
static void emit(relay_instance* inst, uint32_t slot, int kind, double a, double b, double c) {
  napi_env env = inst->env;
  napi_handle_scope scope;
  napi_value fn, recv, argv[5], result;
  if (inst->on_event == NULL || napi_open_handle_scope(env, &scope) != napi_ok) return;
  if (napi_get_reference_value(env, inst->on_event, &fn) == napi_ok && fn != NULL &&
      napi_get_reference_value(env, inst->resource, &recv) == napi_ok && recv != NULL &&
      napi_create_uint32(env, slot, &argv[0]) == napi_ok && napi_create_int32(env, kind, &argv[1]) == napi_ok &&
      napi_create_double(env, a, &argv[2]) == napi_ok && napi_create_double(env, b, &argv[3]) == napi_ok &&
      napi_create_double(env, c, &argv[4]) == napi_ok) {
    if (napi_make_callback(env, inst->async_context, recv, fn, 5, argv, &result) != napi_ok) {
      bool pending = false;
      napi_value ignored;
      if (napi_is_exception_pending(env, &pending) == napi_ok && pending) napi_get_and_clear_last_exception(env, &ignored);
    }
  }
  napi_close_handle_scope(env, scope);
}

/* ---- the pump --------------------------------------------------------------------------------- */

static int would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

/* Sends as much of data as the socket takes now: the count sent, or -errno on a failure other
 * than a full send buffer. */
static ssize_t send_some(int fd, const char* data, size_t len) {
  size_t sent = 0;
  while (sent < len) {
    ssize_t n = send(fd, data + sent, len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      sent += (size_t)n;
      continue;
    }
    if (errno == EINTR) continue;
    if (would_block(errno)) break;
    return -errno;
  }
  return (ssize_t)sent;
}

/* Passes the FIN of direction src on once its residue is out; finishes the connection when both
 * directions have. False when the connection is finishing. */
static int pass_fin(relay_conn* c, int src) {
  int dst = 1 - src;
  if (!(c->dir[src] & D_EOF) || (c->dir[src] & D_SHUT) || c->residue[src] != NULL) return 1;
  if (shutdown(c->legs[dst].fd, SHUT_WR) != 0 && errno != ENOTCONN) {
    finish(c, END_ERROR);
    return 0;
  }
  c->dir[src] |= D_SHUT;
  if ((c->dir[CLIENT] & D_SHUT) && (c->dir[UPSTREAM] & D_SHUT)) {
    finish(c, END_EOF);
    return 0;
  }
  return 1;
}

/* Writes direction src's residue to its destination. False when the connection is finishing. */
static int flush_residue(relay_conn* c, int src) {
  int dst = 1 - src;
  if (c->residue[src] == NULL) return 1;
  ssize_t n = send_some(c->legs[dst].fd, c->residue[src] + c->residue_off[src], c->residue_len[src] - c->residue_off[src]);
  if (n < 0) {
    finish(c, END_ERROR);
    return 0;
  }
  c->residue_off[src] += (uint32_t)n;
  if (c->residue_off[src] < c->residue_len[src]) return 1;
  free(c->residue[src]);
  c->residue[src] = NULL;
  c->residue_off[src] = c->residue_len[src] = 0;
  if (!pass_fin(c, src)) return 0;
  update_events(c, src);
  update_events(c, dst);
  return 1;
}

/* The first-byte watch: tells JavaScript of the client's first bytes (unless the upstream spoke
 * first) and of the upstream's. False when the callback finished the connection. */
static int note_first_bytes(relay_conn* c, int src) {
  if (src == CLIENT) {
    if ((c->flags & F_ARMED) || c->moved[UPSTREAM] > 0) return 1;
    c->flags |= F_ARMED;
    emit(c->inst, c->slot, EV_CLIENT_FIRST, 0, 0, 0);
  } else {
    c->flags &= (uint8_t)~F_WATCH;
    emit(c->inst, c->slot, EV_UPSTREAM_FIRST, 0, 0, 0);
  }
  return !(c->flags & F_CLOSING);
}

/* Reads from legs[src] and writes each chunk to the other leg until the source is drained, a
 * write falls short (the rest becomes the residue) or the per-event bound is reached. */
static void pump(relay_conn* c, int src) {
  relay_instance* inst = c->inst;
  int dst = 1 - src;
  for (int i = 0; i < MAX_READS_PER_EVENT; i++) {
    if ((c->flags & F_CLOSING) || (c->dir[src] & D_EOF) || c->residue[src] != NULL) return;
    ssize_t r = recv(c->legs[src].fd, inst->buf, inst->buf_bytes, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (would_block(errno)) return;
      finish(c, END_ERROR);
      return;
    }
    if (r == 0) {
      c->dir[src] |= D_EOF;
      if (!pass_fin(c, src)) return;
      update_events(c, src);
      return;
    }
    c->moved[src] += (double)r;
    c->flags |= F_ACTIVE;
    if ((c->flags & F_WATCH) && !note_first_bytes(c, src)) return;
    ssize_t w = send_some(c->legs[dst].fd, inst->buf, (size_t)r);
    if (w < 0) {
      finish(c, END_ERROR);
      return;
    }
    if (w < r) {
      size_t rest = (size_t)(r - w);
      char* copy = malloc(rest);
      if (copy == NULL) {
        finish(c, END_ERROR);
        return;
      }
      memcpy(copy, inst->buf + w, rest);
      c->residue[src] = copy;
      c->residue_off[src] = 0;
      c->residue_len[src] = (uint32_t)rest;
      update_events(c, src);
      update_events(c, dst);
      return;
    }
    if ((size_t)r < inst->buf_bytes) return; /* drained: no read that would only say EAGAIN */
  }
}

/* Polls legs[leg] for what it needs now: readable while its direction may read, writable while
 * the other direction has a residue for it. The poll is restarted only when that changed. */
static void update_events(relay_conn* c, int leg) {
  relay_leg* l = &c->legs[leg];
  int want = 0;
  if (c->flags & F_CLOSING) return;
  if (!(c->dir[leg] & D_EOF) && c->residue[leg] == NULL) want |= UV_READABLE;
  if (c->residue[1 - leg] != NULL) want |= UV_WRITABLE;
  if (want == l->events) return;
  int err = want == 0 ? uv_poll_stop(&l->poll) : uv_poll_start(&l->poll, want, on_poll);
  if (err != 0) {
    finish(c, END_ERROR);
    return;
  }
  l->events = want;
}

static void on_poll(uv_poll_t* p, int status, int events) {
  relay_conn* c = p->data;
  int leg = p == &c->legs[CLIENT].poll ? CLIENT : UPSTREAM;
  if (c->flags & F_CLOSING) return;
  if (status < 0) {
    finish(c, END_ERROR);
    return;
  }
  if ((events & UV_WRITABLE) && !flush_residue(c, 1 - leg)) return;
  if ((events & UV_READABLE) && !(c->flags & F_CLOSING)) pump(c, leg);
}

/* ---- connection life -------------------------------------------------------------------------- */

static void release_slot(relay_instance* inst, uint32_t slot) {
  inst->slots[slot] = NULL;
  inst->free_slots[inst->nfree++] = slot;
  inst->live--;
}

/* A poll's close callback: once both are closed the connection is freed and JavaScript told, with
 * the reason and the final counts. A connection that never got a slot (open() failed half-way)
 * is only freed. */
static void on_poll_closed(uv_handle_t* h) {
  relay_conn* c = h->data;
  if (--c->open_polls != 0) return;
  relay_instance* inst = c->inst;
  uint32_t slot = c->slot;
  int reason = c->reason;
  double up = c->moved[CLIENT], down = c->moved[UPSTREAM];
  free(c);
  if (slot == UINT32_MAX) return;
  release_slot(inst, slot);
  emit(inst, slot, EV_END, reason, up, down);
}

/* Ends the connection once: both polls are closed (which takes the fds out of epoll), both fds
 * closed, residues freed; the end event is sent when libuv has closed both polls. */
static void finish(relay_conn* c, int reason) {
  if (c->flags & F_CLOSING) return;
  c->flags |= F_CLOSING;
  c->reason = (uint8_t)reason;
  for (int i = 0; i < 2; i++) {
    uv_close((uv_handle_t*)&c->legs[i].poll, on_poll_closed);
    close(c->legs[i].fd);
    c->legs[i].fd = -1;
    free(c->residue[i]);
    c->residue[i] = NULL;
  }
}

/* ---- Node-API surface ------------------------------------------------------------------------- */

static relay_instance* instance_of(napi_env env) {
  void* data = NULL;
  if (napi_get_instance_data(env, &data) != napi_ok) return NULL;
  return data;
}

static napi_value number(napi_env env, double v) {
  napi_value out;
  napi_create_double(env, v, &out);
  return out;
}

static int get_args(napi_env env, napi_callback_info info, size_t want, napi_value* argv) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) {
    napi_throw_type_error(env, NULL, "kubeward native relay: missing arguments");
    return 0;
  }
  return 1;
}

static relay_conn* conn_arg(napi_env env, relay_instance* inst, napi_value v) {
  uint32_t slot;
  if (inst == NULL || napi_get_value_uint32(env, v, &slot) != napi_ok || slot >= inst->nslots) return NULL;
  return inst->slots[slot];
}

/* init(onEvent, readBytes): onEvent(slot, kind, a, b) is called for EV_* events. */
static napi_value js_init(napi_env env, napi_callback_info info) {
  napi_value argv[2], name;
  uint32_t bytes;
  relay_instance* inst = instance_of(env);
  if (!get_args(env, info, 2, argv) || inst == NULL) return NULL;
  if (inst->on_event != NULL) {
    napi_throw_error(env, NULL, "kubeward native relay: init() was called already");
    return NULL;
  }
  if (napi_get_value_uint32(env, argv[1], &bytes) != napi_ok || bytes < 1024 || bytes > (1u << 24)) {
    napi_throw_range_error(env, NULL, "kubeward native relay: read size out of range");
    return NULL;
  }
  /* malloc'd, not touched: pages become resident only as reads fill them. */
  inst->buf = malloc(bytes);
  if (inst->buf == NULL) {
    napi_throw_error(env, NULL, "kubeward native relay: out of memory");
    return NULL;
  }
  inst->buf_bytes = bytes;
  napi_value resource;
  if (napi_create_reference(env, argv[0], 1, &inst->on_event) != napi_ok || napi_create_object(env, &resource) != napi_ok ||
      napi_create_reference(env, resource, 1, &inst->resource) != napi_ok ||
      napi_create_string_utf8(env, "kubeward.nativeRelay", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_async_init(env, resource, name, &inst->async_context) != napi_ok) {
    napi_throw_error(env, NULL, "kubeward native relay: init failed");
    return NULL;
  }
  return number(env, (double)sizeof(relay_conn));
}

static int grow_slots(relay_instance* inst) {
  uint32_t cap = inst->cap == 0 ? 64 : inst->cap * 2;
  relay_conn** slots = realloc(inst->slots, cap * sizeof(*slots));
  if (slots == NULL) return 0;
  inst->slots = slots;
  uint32_t* free_slots = realloc(inst->free_slots, cap * sizeof(*free_slots));
  if (free_slots == NULL) return 0;
  inst->free_slots = free_slots;
  inst->cap = cap;
  return 1;
}

static int dup_fd(int fd) {
  int out;
  do out = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  while (out < 0 && errno == EINTR);
  return out;
}

/* open(clientFd, upstreamFd, watchFirstByte): the slot (>= 0) of a connection on dups of both
 * fds, or -errno. The caller closes its own handles of both fds next. */
static napi_value js_open(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  int32_t fds[2];
  bool watch = false;
  relay_instance* inst = instance_of(env);
  if (!get_args(env, info, 3, argv)) return NULL;
  if (inst == NULL || inst->on_event == NULL) return number(env, -EINVAL);
  if (napi_get_value_int32(env, argv[0], &fds[0]) != napi_ok || napi_get_value_int32(env, argv[1], &fds[1]) != napi_ok ||
      napi_get_value_bool(env, argv[2], &watch) != napi_ok || fds[0] < 0 || fds[1] < 0 || fds[0] == fds[1])
    return number(env, -EBADF);
  if (inst->nfree == 0 && inst->nslots == inst->cap && !grow_slots(inst)) return number(env, -ENOMEM);
  relay_conn* c = calloc(1, sizeof(*c));
  if (c == NULL) return number(env, -ENOMEM);
  c->inst = inst;
  c->slot = UINT32_MAX;
  c->legs[0].fd = c->legs[1].fd = -1;
  int err = 0;
  for (int i = 0; i < 2 && err == 0; i++) {
    c->legs[i].fd = dup_fd(fds[i]);
    if (c->legs[i].fd < 0) err = -errno;
  }
  int inited = 0;
  for (; err == 0 && inited < 2; inited++) {
    c->legs[inited].poll.data = c;
    err = uv_poll_init(inst->loop, &c->legs[inited].poll, c->legs[inited].fd); /* -errno on Unix */
    if (err != 0) break;
  }
  if (err != 0) {
    for (int i = 0; i < 2; i++)
      if (c->legs[i].fd >= 0) close(c->legs[i].fd);
    if (inited == 0) {
      free(c);
    } else {
      /* An initialised poll is freed through the loop (on_poll_closed frees a slotless conn). */
      c->flags = F_CLOSING;
      c->open_polls = (uint8_t)inited;
      for (int i = 0; i < inited; i++) uv_close((uv_handle_t*)&c->legs[i].poll, on_poll_closed);
    }
    return number(env, err);
  }
  c->inst = inst;
  c->open_polls = 2;
  c->flags = F_ACTIVE | (watch ? F_WATCH : 0);
  c->slot = inst->nfree > 0 ? inst->free_slots[--inst->nfree] : inst->nslots++;
  inst->slots[c->slot] = c;
  inst->live++;
  update_events(c, CLIENT);
  update_events(c, UPSTREAM);
  return number(env, c->slot);
}

/* destroy(slot): abortive close of both sockets; the end event follows from the loop. Idempotent. */
static napi_value js_destroy(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  relay_conn* c = conn_arg(env, instance_of(env), argv[0]);
  if (c != NULL) finish(c, END_DESTROYED);
  return NULL;
}

/* moved(slot, fromClient): bytes read from the client (true) or the upstream (false) so far. */
static napi_value js_moved(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  bool from_client = false;
  if (!get_args(env, info, 2, argv)) return NULL;
  relay_conn* c = conn_arg(env, instance_of(env), argv[0]);
  if (c == NULL || napi_get_value_bool(env, argv[1], &from_client) != napi_ok) return number(env, 0);
  return number(env, c->moved[from_client ? CLIENT : UPSTREAM]);
}

/* active(slot, clear): whether a byte moved since the flag was last cleared; clears it if asked. */
static napi_value js_active(napi_env env, napi_callback_info info) {
  napi_value argv[2], out;
  bool clear = false;
  if (!get_args(env, info, 2, argv)) return NULL;
  relay_conn* c = conn_arg(env, instance_of(env), argv[0]);
  bool was = c != NULL && (c->flags & F_ACTIVE);
  if (c != NULL && napi_get_value_bool(env, argv[1], &clear) == napi_ok && clear) c->flags &= (uint8_t)~F_ACTIVE;
  napi_get_boolean(env, was, &out);
  return out;
}

/* unwatch(slot): no more first-byte events for this connection. */
static napi_value js_unwatch(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  relay_conn* c = conn_arg(env, instance_of(env), argv[0]);
  if (c != NULL) c->flags &= (uint8_t)~F_WATCH;
  return NULL;
}

/*
 * trim(): gives the heap's free memory back to the kernel (glibc's malloc_trim). After a burst the
 * arenas keep what the burst freed (TLS and libuv allocations, this file's connection slots), so
 * the process's private memory stays at its peak; the proxy calls this once the load has passed.
 * True when memory was released.
 */
static napi_value js_trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_get_boolean(env, malloc_trim(0) == 1, &out);
  return out;
}

/* stats(): [connections open, bytes held in residues]. */
static napi_value js_stats(napi_env env, napi_callback_info info) {
  (void)info;
  relay_instance* inst = instance_of(env);
  napi_value out;
  double residue = 0;
  if (napi_create_array_with_length(env, 2, &out) != napi_ok) return NULL;
  if (inst != NULL)
    for (uint32_t i = 0; i < inst->nslots; i++) {
      relay_conn* c = inst->slots[i];
      if (c != NULL) residue += (double)(c->residue_len[0] - c->residue_off[0]) + (double)(c->residue_len[1] - c->residue_off[1]);
    }
  napi_set_element(env, out, 0, number(env, inst == NULL ? 0 : inst->live));
  napi_set_element(env, out, 1, number(env, residue));
  return out;
}

/* ---- listener hand-over (src/handover/) -------------------------------------------------------
 * Node has no sendmsg/recvmsg with SCM_RIGHTS on a unix socket it did not create as an IPC pipe of
 * a child, nor SO_PEERCRED: these five calls are the whole of it. The receiving side (a process
 * starting up, before it serves) uses its own socket, so libuv never read()s a message and loses
 * its descriptors; the offering side sends on the fd of the socket Node accepted, and only JSON
 * text comes back to it. No call blocks longer than its timeout; errors are -errno, never a throw. */

/* At most this many descriptors per message; more is a protocol error (closed on arrival). */
#define HANDOVER_MAX_FDS 64

static napi_value handover_errno(napi_env env, int err) { return number(env, -(double)err); }

/* handoverConnect(path): a connected unix stream socket (non-blocking, close-on-exec), or -errno
 * (-ENOENT: no socket; -ECONNREFUSED: nobody listens on it). */
static napi_value js_handover_connect(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  struct sockaddr_un addr;
  size_t len = 0;
  if (!get_args(env, info, 1, argv)) return NULL;
  memset(&addr, 0, sizeof(addr));
  addr.sun_family = AF_UNIX;
  if (napi_get_value_string_utf8(env, argv[0], addr.sun_path, sizeof(addr.sun_path), &len) != napi_ok) return handover_errno(env, EINVAL);
  if (len == 0 || len >= sizeof(addr.sun_path) - 1) return handover_errno(env, ENAMETOOLONG);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return handover_errno(env, errno);
  int r;
  do r = connect(fd, (struct sockaddr*)&addr, sizeof(addr));
  while (r < 0 && errno == EINTR);
  if (r < 0) {
    int err = errno;
    close(fd);
    return handover_errno(env, err);
  }
  return number(env, fd);
}

/* handoverSend(fd, data, fds): bytes sent (with the descriptors on the first byte), or -errno.
 * Never waits: a full socket buffer is -EAGAIN. */
static napi_value js_handover_send(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  int32_t fd;
  void* data = NULL;
  size_t data_len = 0;
  uint32_t nfds = 0;
  bool is_array = false;
  if (!get_args(env, info, 3, argv)) return NULL;
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0 || napi_get_buffer_info(env, argv[1], &data, &data_len) != napi_ok || data_len == 0 ||
      napi_is_array(env, argv[2], &is_array) != napi_ok || !is_array || napi_get_array_length(env, argv[2], &nfds) != napi_ok || nfds > HANDOVER_MAX_FDS)
    return handover_errno(env, EINVAL);
  int fds[HANDOVER_MAX_FDS];
  for (uint32_t i = 0; i < nfds; i++) {
    napi_value v;
    if (napi_get_element(env, argv[2], i, &v) != napi_ok || napi_get_value_int32(env, v, &fds[i]) != napi_ok || fds[i] < 0) return handover_errno(env, EINVAL);
  }
  union {
    char buf[CMSG_SPACE(sizeof(int) * HANDOVER_MAX_FDS)];
    struct cmsghdr align;
  } control;
  struct iovec iov = {.iov_base = data, .iov_len = data_len};
  struct msghdr msg;
  memset(&msg, 0, sizeof(msg));
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (nfds > 0) {
    memset(&control, 0, sizeof(control));
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    struct cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
  }
  ssize_t n;
  do n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  return n < 0 ? handover_errno(env, errno) : number(env, (double)n);
}

/* handoverReceive(fd, maxBytes, timeoutMs): [data, fds, truncated] once the socket is readable
 * (data empty: the peer closed), or -errno (-ETIMEDOUT). Received descriptors are close-on-exec;
 * truncated: the kernel dropped descriptors that did not fit (the caller rejects the message). */
static napi_value js_handover_receive(napi_env env, napi_callback_info info) {
  napi_value argv[3], out, data, fdlist, flag;
  int32_t fd, timeout;
  uint32_t max_bytes;
  if (!get_args(env, info, 3, argv)) return NULL;
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0 || napi_get_value_uint32(env, argv[1], &max_bytes) != napi_ok || max_bytes == 0 ||
      max_bytes > 65536 || napi_get_value_int32(env, argv[2], &timeout) != napi_ok || timeout < 0 || timeout > 60000)
    return handover_errno(env, EINVAL);
  struct pollfd p = {.fd = fd, .events = POLLIN};
  int ready;
  do ready = poll(&p, 1, timeout);
  while (ready < 0 && errno == EINTR);
  if (ready < 0) return handover_errno(env, errno);
  if (ready == 0) return handover_errno(env, ETIMEDOUT);
  char* buf = malloc(max_bytes);
  if (buf == NULL) return handover_errno(env, ENOMEM);
  union {
    char buf[CMSG_SPACE(sizeof(int) * HANDOVER_MAX_FDS)];
    struct cmsghdr align;
  } control;
  struct iovec iov = {.iov_base = buf, .iov_len = max_bytes};
  struct msghdr msg;
  memset(&msg, 0, sizeof(msg));
  memset(&control, 0, sizeof(control));
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof(control.buf);
  ssize_t n;
  do n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    int err = errno;
    free(buf);
    return handover_errno(env, err);
  }
  int fds[HANDOVER_MAX_FDS];
  uint32_t nfds = 0;
  bool truncated = (msg.msg_flags & MSG_CTRUNC) != 0;
  for (struct cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    int* in = (int*)CMSG_DATA(cm);
    for (size_t i = 0; i < count; i++) {
      int got;
      memcpy(&got, in + i, sizeof(int));
      if (nfds < HANDOVER_MAX_FDS) fds[nfds++] = got;
      else {
        close(got);
        truncated = true;
      }
    }
  }
  bool ok = napi_create_buffer_copy(env, (size_t)n, buf, NULL, &data) == napi_ok && napi_create_array_with_length(env, nfds, &fdlist) == napi_ok &&
            napi_get_boolean(env, truncated, &flag) == napi_ok && napi_create_array_with_length(env, 3, &out) == napi_ok;
  free(buf);
  for (uint32_t i = 0; ok && i < nfds; i++) ok = napi_set_element(env, fdlist, i, number(env, fds[i])) == napi_ok;
  if (!ok) {
    /* Nobody will hear of these descriptors: they must not leak. */
    for (uint32_t i = 0; i < nfds; i++) close(fds[i]);
    return handover_errno(env, ENOMEM);
  }
  napi_set_element(env, out, 0, data);
  napi_set_element(env, out, 1, fdlist);
  napi_set_element(env, out, 2, flag);
  return out;
}

/* handoverPeer(fd): [pid, uid, gid] of the process at the other end (SO_PEERCRED, as it was at
 * connect or listen time), or -errno. */
static napi_value js_handover_peer(napi_env env, napi_callback_info info) {
  napi_value argv[1], out;
  int32_t fd;
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (!get_args(env, info, 1, argv)) return NULL;
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) return handover_errno(env, EINVAL);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return handover_errno(env, errno);
  if (napi_create_array_with_length(env, 3, &out) != napi_ok) return NULL;
  napi_set_element(env, out, 0, number(env, cred.pid));
  napi_set_element(env, out, 1, number(env, cred.uid));
  napi_set_element(env, out, 2, number(env, cred.gid));
  return out;
}

/* handoverClose(fd): closes a descriptor this side owns (its socket, a received one it does not
 * adopt); 0 or -errno. */
static napi_value js_handover_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int32_t fd;
  if (!get_args(env, info, 1, argv)) return NULL;
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 3) return handover_errno(env, EINVAL);
  return number(env, close(fd) == 0 ? 0 : -(double)errno);
}

/* At the environment's teardown the loop runs no more: every socket still open is closed (its
 * peer sees the close). A connection still open keeps its struct, which the loop's handle queue
 * may still point at; with none open, everything is freed. */
static void instance_finalize(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  relay_instance* inst = data;
  for (uint32_t i = 0; i < inst->nslots; i++) {
    relay_conn* c = inst->slots[i];
    if (c == NULL || (c->flags & F_CLOSING)) continue;
    for (int j = 0; j < 2; j++) {
      if (c->legs[j].fd >= 0) close(c->legs[j].fd);
      c->legs[j].fd = -1;
    }
  }
  free(inst->buf);
  inst->buf = NULL;
  if (inst->live != 0) return;
  free(inst->slots);
  free(inst->free_slots);
  free(inst);
}

/* Before the environment goes: the callback, its receiver and the async context are released
 * (no event is sent after this). */
static void env_cleanup(void* arg) {
  relay_instance* inst = arg;
  napi_env env = inst->env;
  if (inst->async_context != NULL) napi_async_destroy(env, inst->async_context);
  if (inst->on_event != NULL) napi_delete_reference(env, inst->on_event);
  if (inst->resource != NULL) napi_delete_reference(env, inst->resource);
  inst->async_context = NULL;
  inst->on_event = inst->resource = NULL;
}

static napi_value module_init(napi_env env, napi_value exports) {
  relay_instance* inst = calloc(1, sizeof(*inst));
  if (inst == NULL) return NULL;
  inst->env = env;
  if (napi_get_uv_event_loop(env, &inst->loop) != napi_ok || napi_set_instance_data(env, inst, instance_finalize, NULL) != napi_ok) {
    free(inst);
    napi_throw_error(env, NULL, "kubeward native relay: no event loop");
    return NULL;
  }
  /* From here the instance is the environment's: its finalizer frees it. */
  if (napi_add_env_cleanup_hook(env, env_cleanup, inst) != napi_ok) {
    napi_throw_error(env, NULL, "kubeward native relay: no cleanup hook");
    return NULL;
  }
  napi_property_descriptor props[] = {
      {"init", NULL, js_init, NULL, NULL, NULL, napi_default, NULL},
      {"open", NULL, js_open, NULL, NULL, NULL, napi_default, NULL},
      {"destroy", NULL, js_destroy, NULL, NULL, NULL, napi_default, NULL},
      {"moved", NULL, js_moved, NULL, NULL, NULL, napi_default, NULL},
      {"active", NULL, js_active, NULL, NULL, NULL, napi_default, NULL},
      {"unwatch", NULL, js_unwatch, NULL, NULL, NULL, napi_default, NULL},
      {"stats", NULL, js_stats, NULL, NULL, NULL, napi_default, NULL},
      {"trim", NULL, js_trim, NULL, NULL, NULL, napi_default, NULL},
      {"handoverConnect", NULL, js_handover_connect, NULL, NULL, NULL, napi_default, NULL},
      {"handoverSend", NULL, js_handover_send, NULL, NULL, NULL, napi_default, NULL},
      {"handoverReceive", NULL, js_handover_receive, NULL, NULL, NULL, napi_default, NULL},
      {"handoverPeer", NULL, js_handover_peer, NULL, NULL, NULL, napi_default, NULL},
      {"handoverClose", NULL, js_handover_close, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, module_init)
