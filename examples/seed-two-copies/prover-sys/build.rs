// Compiles the native prover into $OUT_DIR/libgroth16_cuda.a, the way the story's -sys crate did:
// with nvcc when it is on PATH (cuda/groth16_cuda.cu), else with cc (cuda/groth16_cuda.c, a C stand-in).
// It declares ONLY build.rs with rerun-if-changed, which is the fault stalecheck reports:
// Cargo never looks at the .cu/.c source again.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn on_path(tool: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

fn run(cmd: &mut Command) {
    let status = cmd.status().unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    assert!(status.success(), "{cmd:?} failed: {status}");
}

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let obj = out.join("groth16_cuda.o");
    let timing = env::var_os("CARGO_FEATURE_TIMING").is_some();
    let nvcc = if env::var_os("STALECHECK_DEMO_NO_NVCC").is_some() { None } else { on_path("nvcc") };

    let mut cc = match &nvcc {
        Some(nvcc) => {
            let mut c = Command::new(nvcc);
            // A host compiler newer than this nvcc knows (Debian 12: gcc 12, nvcc 11.8) works for this code.
            c.args(["-c", "-O2", "-ccbin", "c++", "-allow-unsupported-compiler", "-Xcompiler", "-fPIC", "cuda/groth16_cuda.cu"]);
            c
        }
        None => {
            let mut c = Command::new(env::var("CC").unwrap_or_else(|_| "cc".into()));
            c.args(["-c", "-O2", "-fPIC", "cuda/groth16_cuda.c"]);
            c
        }
    };
    if timing {
        cc.arg("-DCUZK_TIMING");
    }
    run(cc.arg("-o").arg(&obj));
    run(Command::new("ar").arg("crs").arg(out.join("libgroth16_cuda.a")).arg(&obj));

    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=groth16_cuda");
    if let Some(nvcc) = &nvcc {
        // nvcc lives in <cuda>/bin; the runtime in <cuda>/lib64.
        let lib64 = nvcc.parent().and_then(Path::parent).map(|c| c.join("lib64")).unwrap();
        println!("cargo:rustc-link-search=native={}", lib64.display());
        println!("cargo:rustc-link-lib=dylib=cudart");
        println!("cargo:rustc-link-lib=dylib=stdc++");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
