//! Safe wrapper over the native `groth16_cuda` library that build.rs compiles into OUT_DIR.

extern "C" {
    fn groth16_prove(n: u32) -> u64;
}

/// Runs the native "prover" over n elements and returns its digest.
pub fn prove(n: u32) -> u64 {
    unsafe { groth16_prove(n) }
}
