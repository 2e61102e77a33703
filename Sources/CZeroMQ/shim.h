#ifndef CZEROMQ_SHIM_H
#define CZEROMQ_SHIM_H

#include <errno.h>
#include <zmq.h>
#ifdef __linux__
#include <sys/eventfd.h>
#endif

/* Error numbers that libzmq defines as expressions (ZMQ_HAUSNUMERO + n) do not import into
   Swift, and errno.h's names differ between C libraries: expose each one as a function. */
static inline int czmq_eterm(void) { return ETERM; }
static inline int czmq_efsm(void) { return EFSM; }
static inline int czmq_enocompatproto(void) { return ENOCOMPATPROTO; }
static inline int czmq_emthread(void) { return EMTHREAD; }
static inline int czmq_eagain(void) { return EAGAIN; }
static inline int czmq_eintr(void) { return EINTR; }
static inline int czmq_einval(void) { return EINVAL; }
static inline int czmq_enotsock(void) { return ENOTSOCK; }
static inline int czmq_enotsup(void) { return ENOTSUP; }
static inline int czmq_ehostunreach(void) { return EHOSTUNREACH; }
static inline int czmq_enoent(void) { return ENOENT; }

#ifdef __linux__
/* A non-blocking, close-on-exec eventfd (ZMQWakeup); its flags are an enum Swift does not import. */
static inline int czmq_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
#endif

#endif
