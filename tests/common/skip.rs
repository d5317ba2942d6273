//! What a test does when it cannot run (shared by the root's and the CLI's test binaries).
//!
//! A test that cannot run here (no GPU asked for, no VTK reader, a device without 64-bit
//! integers) must not pass silently: with `WGDEM_STRICT_TESTS=1`, which `.ci/run` sets, it
//! fails; otherwise it says so on stderr and appends its name and the reason to the file that
//! `WGDEM_SKIPPED_LOG` names, which `scripts/test.sh` prints at the end.

/// True where every test must run (`WGDEM_STRICT_TESTS=1`: CI).
pub fn strict() -> bool {
    std::env::var("WGDEM_STRICT_TESTS").is_ok_and(|v| v == "1")
}

/// The running test's name (libtest names each test's thread after it).
fn test_name() -> String {
    std::thread::current().name().unwrap_or("a test").to_owned()
}

/// Reports that the running test cannot do what it checks because of `why`: a failure under
/// [`strict`], else a line on stderr and in `WGDEM_SKIPPED_LOG`'s file.
pub fn cannot_run(why: &str) {
    let test = test_name();
    assert!(
        !strict(),
        "{test} cannot run: {why} (WGDEM_STRICT_TESTS=1 requires every test to run)"
    );
    eprintln!("SKIPPED {test}: {why}");
    if let Ok(path) = std::env::var("WGDEM_SKIPPED_LOG") {
        use std::io::Write;
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(file, "{test}: {why}");
        }
    }
}

/// True where `WGDEM_SKIP_GPU_TESTS=1` asks to skip the GPU tests (reported by
/// [`cannot_run`], so a failure under [`strict`]).
pub fn gpu_tests_skipped() -> bool {
    let skip = std::env::var("WGDEM_SKIP_GPU_TESTS").is_ok_and(|v| v == "1");
    if skip {
        cannot_run("WGDEM_SKIP_GPU_TESTS=1");
    }
    skip
}
