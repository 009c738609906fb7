/*
 * RFC 9562 UUIDs as text: version 4 (random: Iceberg table uuids) and
 * version 7 (a millisecond Unix timestamp, then random: OpenLineage run
 * ids, which sort by start time).
 */
#include "knut/core.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

static void fill_random(uint8_t u[16])
{
    if (getrandom(u, 16, 0) != 16) {
        /* getrandom does not fail for 16 bytes once the pool is ready;
         * time and the monotonic clock still make an id no other writer picks. */
        uint64_t a = (uint64_t)knut_clock_wall_us(), b = (uint64_t)knut_clock_mono_ns();
        memcpy(u, &a, 8);
        memcpy(u + 8, &b, 8);
    }
}

static void format(const uint8_t u[16], char out[KNUT_UUID_LEN])
{
    snprintf(out, KNUT_UUID_LEN,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
}

void knut_uuid_v4(char out[KNUT_UUID_LEN])
{
    uint8_t u[16];
    fill_random(u);
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x40); /* version 4 */
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80); /* RFC variant */
    format(u, out);
}

void knut_uuid_v7(char out[KNUT_UUID_LEN])
{
    uint8_t u[16];
    fill_random(u);
    uint64_t ms = (uint64_t)(knut_clock_wall_us() / 1000);
    for (int i = 0; i < 6; i++)
        u[i] = (uint8_t)(ms >> (40 - 8 * i)); /* 48-bit big-endian timestamp */
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x70); /* version 7 */
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
    format(u, out);
}
