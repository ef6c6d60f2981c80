// groth16_cuda.cu: the GPU version of the stand-in prover (built when nvcc is on PATH).
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

__global__ void msm_kernel(uint32_t n, unsigned long long *acc) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicXor(acc, (unsigned long long)i * 0xff51afd7ed558ccdull);
    }
}

extern "C" uint64_t groth16_prove(uint32_t n) {
#ifdef CUZK_TIMING
    fprintf(stderr, "CUZK_TIMING msm start n=%u\n", n);
#endif
    unsigned long long *d_acc = nullptr, h_acc = 0x9e3779b97f4a7c15ull;
    cudaMalloc(&d_acc, sizeof h_acc);
    cudaMemcpy(d_acc, &h_acc, sizeof h_acc, cudaMemcpyHostToDevice);
    msm_kernel<<<(n + 255) / 256, 256>>>(n, d_acc);
    cudaMemcpy(&h_acc, d_acc, sizeof h_acc, cudaMemcpyDeviceToHost);
    cudaFree(d_acc);
#ifdef CUZK_TIMING
    fprintf(stderr, "CUZK_TIMING msm end\n");
#endif
    return h_acc;
}
