#ifndef CFLOWCHECKSUM_H
#define CFLOWCHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/// Feeds `count` bytes to a CRC-32C (Castagnoli, reflected) register and returns the new register.
/// The register is the raw one: start from 0xFFFFFFFF and invert the last, as the CRC's definition
/// says. Uses the CPU's `crc32` instruction (SSE 4.2 on x86-64, the CRC extension on ARMv8) when
/// it has one, three streams at once; slicing-by-8 tables otherwise.
uint32_t flow_crc32c_update(uint32_t crc, const void *bytes, size_t count);

/// Feeds `count` bytes to a CRC-64/NVME (reflected 0x9A6C9329AC4BC9B5) register and returns the new
/// register (start from all ones, invert the last). Folds 64 bytes at a time with carry-less
/// multiplication (PCLMULQDQ) on x86-64 CPUs that have it; slicing-by-8 tables otherwise.
uint64_t flow_crc64nvme_update(uint64_t crc, const void *bytes, size_t count);

/// The same without the CPU's instructions, for tests that compare the two paths.
uint32_t flow_crc32c_update_portable(uint32_t crc, const void *bytes, size_t count);
uint64_t flow_crc64nvme_update_portable(uint64_t crc, const void *bytes, size_t count);

/// 1 when flow_crc32c_update / flow_crc64nvme_update use the CPU's instructions here, else 0.
int flow_crc32c_uses_hardware(void);
int flow_crc64nvme_uses_hardware(void);

#endif
