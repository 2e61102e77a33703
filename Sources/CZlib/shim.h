#ifndef FLOW_CZLIB_SHIM_H
#define FLOW_CZLIB_SHIM_H
#include <zlib.h>

/// `inflateInit2` is a macro; Swift sees this function instead.
static inline int flow_inflate_init(z_stream *stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}
#endif
