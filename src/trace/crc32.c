/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320; the value
 * zlib's crc32() gives) over trace block payloads. The writer thread checks
 * every block it writes, the reader every block it reads (the export reads
 * each payload twice), so it runs eight bytes per step ("slicing by 8").
 * The tables are computed from the polynomial once, on first use. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trace/codec.h"

static uint32_t crc_tables[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    crc_tables[0][i] = c;
  }
  /* tables[t][b]: the CRC of byte b followed by t zero bytes. */
  for (uint32_t i = 0; i < 256; i++)
    for (int t = 1; t < 8; t++) crc_tables[t][i] = (crc_tables[t - 1][i] >> 8) ^ crc_tables[0][crc_tables[t - 1][i] & 0xFF];
}

uint32_t ns_crc32_bytewise(const void* data, size_t n) {
  pthread_once(&crc_once, crc_init);
  const uint8_t* p = data;
  uint32_t c = 0xFFFFFFFFu;
  for (; n; n--, p++) c = crc_tables[0][(c ^ *p) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t ns_crc32(const void* data, size_t n) {
  pthread_once(&crc_once, crc_init);
  const uint8_t* p = data;
  uint32_t c = 0xFFFFFFFFu;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    w ^= c;
    c = crc_tables[7][w & 0xFF] ^ crc_tables[6][(w >> 8) & 0xFF] ^ crc_tables[5][(w >> 16) & 0xFF] ^
        crc_tables[4][(w >> 24) & 0xFF] ^ crc_tables[3][(w >> 32) & 0xFF] ^ crc_tables[2][(w >> 40) & 0xFF] ^
        crc_tables[1][(w >> 48) & 0xFF] ^ crc_tables[0][w >> 56];
  }
#endif
  for (; n; n--, p++) c = crc_tables[0][(c ^ *p) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}
