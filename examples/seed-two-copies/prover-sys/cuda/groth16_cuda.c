/* C stand-in for groth16_cuda.cu: the same host entry point, computed on the CPU. */
#include <stdint.h>
#include <stdio.h>

uint64_t groth16_prove(uint32_t n) {
#ifdef CUZK_TIMING
    fprintf(stderr, "CUZK_TIMING msm start n=%u\n", n);
#endif
    uint64_t acc = 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; i < n; i++) {
        acc ^= (uint64_t)i * 0xff51afd7ed558ccdull;
        acc = (acc << 13) | (acc >> 51);
    }
#ifdef CUZK_TIMING
    fprintf(stderr, "CUZK_TIMING msm end\n");
#endif
    return acc;
}
