// CRC-32C and CRC-64/NVME for UploadFileOp's checksums (FlowStandardOps' CRC32C and CRC64NVME).
// The portable path is slicing-by-8; x86-64 and ARMv8 CPUs that have them get the crc32
// instruction (CRC-32C) and carry-less multiplication (CRC-64/NVME), chosen once at run time.
#include "CFlowChecksum.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <arm_acle.h>
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

#define CRC32C_POLY 0x82F63B78u
#define CRC64NVME_POLY 0x9A6C9329AC4BC9B5ull

static uint32_t crc32c_table[8][256];
static uint64_t crc64_table[8][256];
static int crc32c_hardware;
static int crc64_hardware;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void setup(void) {
    for (unsigned byte = 0; byte < 256; byte++) {
        uint32_t c32 = byte;
        uint64_t c64 = byte;
        for (int bit = 0; bit < 8; bit++) {
            c32 = c32 & 1 ? (c32 >> 1) ^ CRC32C_POLY : c32 >> 1;
            c64 = c64 & 1 ? (c64 >> 1) ^ CRC64NVME_POLY : c64 >> 1;
        }
        crc32c_table[0][byte] = c32;
        crc64_table[0][byte] = c64;
    }
    for (int slice = 1; slice < 8; slice++) {
        for (unsigned byte = 0; byte < 256; byte++) {
            uint32_t p32 = crc32c_table[slice - 1][byte];
            uint64_t p64 = crc64_table[slice - 1][byte];
            crc32c_table[slice][byte] = crc32c_table[0][p32 & 0xFF] ^ (p32 >> 8);
            crc64_table[slice][byte] = crc64_table[0][p64 & 0xFF] ^ (p64 >> 8);
        }
    }
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        crc32c_hardware = (c & bit_SSE4_2) != 0;
        crc64_hardware = (c & bit_PCLMUL) != 0 && (c & bit_SSE4_1) != 0;
    }
#elif defined(__aarch64__) && defined(__linux__)
    crc32c_hardware = (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}

static uint64_t load64(const unsigned char *p) {
    uint64_t word;
    memcpy(&word, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    word = __builtin_bswap64(word);
#endif
    return word;
}

static uint32_t crc32c_portable(uint32_t crc, const unsigned char *p, size_t n) {
    while (n >= 8) {
        uint64_t word = load64(p) ^ crc;
        crc = crc32c_table[7][word & 0xFF] ^ crc32c_table[6][(word >> 8) & 0xFF] ^ crc32c_table[5][(word >> 16) & 0xFF]
            ^ crc32c_table[4][(word >> 24) & 0xFF] ^ crc32c_table[3][(word >> 32) & 0xFF] ^ crc32c_table[2][(word >> 40) & 0xFF]
            ^ crc32c_table[1][(word >> 48) & 0xFF] ^ crc32c_table[0][word >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) crc = crc32c_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

/// A 64-bit register times x^64 modulo the CRC-64 polynomial: the register after 8 zero bytes.
static uint64_t crc64_shift64(uint64_t word) {
    return crc64_table[7][word & 0xFF] ^ crc64_table[6][(word >> 8) & 0xFF] ^ crc64_table[5][(word >> 16) & 0xFF]
        ^ crc64_table[4][(word >> 24) & 0xFF] ^ crc64_table[3][(word >> 32) & 0xFF] ^ crc64_table[2][(word >> 40) & 0xFF]
        ^ crc64_table[1][(word >> 48) & 0xFF] ^ crc64_table[0][word >> 56];
}

static uint64_t crc64_portable(uint64_t crc, const unsigned char *p, size_t n) {
    while (n >= 8) {
        crc = crc64_shift64(crc ^ load64(p));
        p += 8;
        n -= 8;
    }
    while (n--) crc = crc64_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

/// a times b modulo the CRC-32C polynomial, both reflected (bit 31 is x^0), as zlib's multmodp.
static uint32_t crc32c_multiply(uint32_t a, uint32_t b) {
    uint32_t product = 0;
    for (uint32_t mask = 1u << 31; mask != 0; mask >>= 1) {
        if (a & mask) product ^= b;
        b = b & 1 ? (b >> 1) ^ CRC32C_POLY : b >> 1;
    }
    return product;
}

/// x^(8 * bytes) modulo the CRC-32C polynomial, reflected: multiplying a register by it is
/// feeding it that many zero bytes.
static uint32_t crc32c_zeros_operator(size_t bytes) {
    uint32_t result = 1u << 31, square = 1u << 30; // x^0, x^1
    for (size_t bits = bytes * 8; bits != 0; bits >>= 1) {
        if (bits & 1) result = crc32c_multiply(square, result);
        square = crc32c_multiply(square, square);
    }
    return result;
}

/// x^n modulo the CRC-64/NVME polynomial, reflected (bit 63 is x^0).
static uint64_t crc64_x_power(unsigned n) {
    uint64_t value = 1ull << 63;
    while (n--) value = value & 1 ? (value >> 1) ^ CRC64NVME_POLY : value >> 1;
    return value;
}

#define CRC32C_STREAM 8192

#if defined(__x86_64__)
/// Three streams of CRC32C_STREAM bytes at once (the instruction's latency is 3 cycles, its
/// throughput one a cycle), joined by multiplying the first two by the zeros after them.
__attribute__((target("sse4.2")))
static uint32_t crc32c_hardware_update(uint32_t crc, const unsigned char *p, size_t n, uint32_t one, uint32_t two) {
    uint64_t c0 = crc;
    while (n > 0 && ((uintptr_t)p & 7) != 0) {
        c0 = _mm_crc32_u8((uint32_t)c0, *p++);
        n--;
    }
    while (n >= 3 * CRC32C_STREAM) {
        uint64_t c1 = 0, c2 = 0;
        for (const unsigned char *end = p + CRC32C_STREAM; p < end; p += 8) {
            c0 = _mm_crc32_u64(c0, load64(p));
            c1 = _mm_crc32_u64(c1, load64(p + CRC32C_STREAM));
            c2 = _mm_crc32_u64(c2, load64(p + 2 * CRC32C_STREAM));
        }
        c0 = crc32c_multiply(two, (uint32_t)c0) ^ crc32c_multiply(one, (uint32_t)c1) ^ (uint32_t)c2;
        p += 2 * CRC32C_STREAM;
        n -= 3 * CRC32C_STREAM;
    }
    for (; n >= 8; n -= 8, p += 8) c0 = _mm_crc32_u64(c0, load64(p));
    while (n--) c0 = _mm_crc32_u8((uint32_t)c0, *p++);
    return (uint32_t)c0;
}

static inline __attribute__((target("pclmul,sse4.1"))) __m128i fold(__m128i x, __m128i constants) {
    return _mm_xor_si128(_mm_clmulepi64_si128(x, constants, 0x00), _mm_clmulepi64_si128(x, constants, 0x11));
}

/// Folds 64 bytes at a time into four 128-bit accumulators, then into one, then reduces it to the
/// 64-bit register. In the reflected order a 128-bit lane pair L:H stands for L x^64 + H, and a
/// carry-less product of two 64-bit values stands for x times the polynomials' product, so
/// folding across D bits multiplies L by x^(D+63) mod P and H by x^(D-1) mod P.
__attribute__((target("pclmul,sse4.1")))
static uint64_t crc64_hardware_update(uint64_t crc, const unsigned char *p, size_t n) {
    const __m128i by512 = _mm_set_epi64x((long long)crc64_x_power(511), (long long)crc64_x_power(575));
    const __m128i by128 = _mm_set_epi64x((long long)crc64_x_power(127), (long long)crc64_x_power(191));
    __m128i x0 = _mm_loadu_si128((const __m128i *)p), x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32)), x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    x0 = _mm_xor_si128(x0, _mm_cvtsi64_si128((long long)crc));
    p += 64;
    n -= 64;
    for (; n >= 64; n -= 64, p += 64) {
        x0 = _mm_xor_si128(fold(x0, by512), _mm_loadu_si128((const __m128i *)p));
        x1 = _mm_xor_si128(fold(x1, by512), _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = _mm_xor_si128(fold(x2, by512), _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = _mm_xor_si128(fold(x3, by512), _mm_loadu_si128((const __m128i *)(p + 48)));
    }
    __m128i x = _mm_xor_si128(fold(x0, by128), x1);
    x = _mm_xor_si128(fold(x, by128), x2);
    x = _mm_xor_si128(fold(x, by128), x3);
    for (; n >= 16; n -= 16, p += 16) x = _mm_xor_si128(fold(x, by128), _mm_loadu_si128((const __m128i *)p));
    // x = L x^64 + H; the register is x x^64 mod P = (L x^128 + H x^64) mod P. L x^128 is the
    // product of L and x^127 mod P; with H added to its upper-degree half that is S x^64 + T,
    // and S x^64 mod P is S fed through eight zero bytes.
    uint64_t low = (uint64_t)_mm_cvtsi128_si64(x), high = (uint64_t)_mm_extract_epi64(x, 1);
    __m128i product = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)low), by128, 0x10);
    uint64_t s = (uint64_t)_mm_cvtsi128_si64(product) ^ high, t = (uint64_t)_mm_extract_epi64(product, 1);
    crc = crc64_shift64(s) ^ t;
    return crc64_portable(crc, p, n);
}
#elif defined(__aarch64__) && defined(__linux__)
__attribute__((target("crc")))
static uint32_t crc32c_hardware_update(uint32_t crc, const unsigned char *p, size_t n, uint32_t one, uint32_t two) {
    while (n > 0 && ((uintptr_t)p & 7) != 0) {
        crc = __crc32cb(crc, *p++);
        n--;
    }
    while (n >= 3 * CRC32C_STREAM) {
        uint32_t c1 = 0, c2 = 0;
        for (const unsigned char *end = p + CRC32C_STREAM; p < end; p += 8) {
            crc = __crc32cd(crc, load64(p));
            c1 = __crc32cd(c1, load64(p + CRC32C_STREAM));
            c2 = __crc32cd(c2, load64(p + 2 * CRC32C_STREAM));
        }
        crc = crc32c_multiply(two, crc) ^ crc32c_multiply(one, c1) ^ c2;
        p += 2 * CRC32C_STREAM;
        n -= 3 * CRC32C_STREAM;
    }
    for (; n >= 8; n -= 8, p += 8) crc = __crc32cd(crc, load64(p));
    while (n--) crc = __crc32cb(crc, *p++);
    return crc;
}
#endif

uint32_t flow_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    pthread_once(&once, setup);
#if defined(__x86_64__) || (defined(__aarch64__) && defined(__linux__))
    if (crc32c_hardware) {
        uint32_t one = 0, two = 0;
        if (count >= 3 * CRC32C_STREAM) {
            one = crc32c_zeros_operator(CRC32C_STREAM);
            two = crc32c_multiply(one, one);
        }
        return crc32c_hardware_update(crc, bytes, count, one, two);
    }
#endif
    return crc32c_portable(crc, bytes, count);
}

uint64_t flow_crc64nvme_update(uint64_t crc, const void *bytes, size_t count) {
    pthread_once(&once, setup);
#if defined(__x86_64__)
    if (crc64_hardware && count >= 128) return crc64_hardware_update(crc, bytes, count);
#endif
    return crc64_portable(crc, bytes, count);
}

uint32_t flow_crc32c_update_portable(uint32_t crc, const void *bytes, size_t count) {
    pthread_once(&once, setup);
    return crc32c_portable(crc, bytes, count);
}

uint64_t flow_crc64nvme_update_portable(uint64_t crc, const void *bytes, size_t count) {
    pthread_once(&once, setup);
    return crc64_portable(crc, bytes, count);
}

int flow_crc32c_uses_hardware(void) {
    pthread_once(&once, setup);
    return crc32c_hardware;
}

int flow_crc64nvme_uses_hardware(void) {
    pthread_once(&once, setup);
    return crc64_hardware;
}
