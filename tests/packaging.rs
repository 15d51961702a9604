//! What `cargo package` ships (Cargo.toml's `include`) holds every file of the repository that the crate's own
//! code, tests, benches, examples and doctests read at build or test time, so that the packaged crate builds and
//! tests as the repository does: each `include_str!`/`include_bytes!` path, and each repository path written as
//! a string (`Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/convert.cu")`, `tests/fixtures`, ...) that
//! names a file or folder present here. A folder counts when every file under it ships.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The folders the scanned code is in, and so the first part of a repository path written in it.
const FOLDERS: [&str; 7] = [
    "assets", "benches", "docs", "examples", "kernels", "src", "tests",
];

/// The files `cargo package` would ship, as paths relative to the crate's root.
fn packaged() -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_owned());
    let out = Command::new(cargo)
        .args([
            "package",
            "--list",
            "--allow-dirty",
            "--offline",
            "-p",
            "framefeed",
        ])
        .current_dir(ROOT)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo package --list: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The string literals of a line of code (escapes not decoded: a path has none).
fn literals(line: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let mut end = None;
        let mut escaped = false;
        for (i, c) in after.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(end) = end else { break };
        found.push(&after[..end]);
        rest = &after[end + 1..];
    }
    found
}

/// `path` with its `.` and `..` resolved, relative to the crate's root; `None` when it leaves the crate.
fn in_crate(path: &Path) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for part in path.strip_prefix(ROOT).ok()?.components() {
        match part {
            Component::Normal(p) => parts.push(p.to_str()?.to_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// The repository paths that the crate's code reads, with the file and line that names each one.
fn read_by_code() -> Vec<(String, String)> {
    let mut files = Vec::new();
    for folder in ["src", "tests", "benches", "examples"] {
        rust_files(&Path::new(ROOT).join(folder), &mut files);
    }
    let mut read = Vec::new();
    // This file names paths only to check them.
    files.retain(|f| !f.ends_with("tests/packaging.rs"));
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let dir = file.parent().unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            let at = format!("{}:{}", in_crate(&file).unwrap(), n + 1);
            let included = code.contains("include_str!(") || code.contains("include_bytes!(");
            for literal in literals(code) {
                if !literal
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-./{}".contains(c))
                {
                    continue;
                }
                // `format!("{root}/kernels/build.sh")`: the part after the root.
                let literal = literal.rsplit_once("}/").map_or(literal, |(_, p)| p);
                let path = if included {
                    in_crate(&dir.join(literal))
                } else if FOLDERS
                    .iter()
                    .any(|f| literal.starts_with(&format!("{f}/")))
                {
                    Some(literal.trim_end_matches('/').to_owned())
                } else {
                    None
                };
                if let Some(path) = path {
                    if Path::new(ROOT).join(&path).exists() {
                        read.push((path, at.clone()));
                    }
                }
            }
        }
    }
    read
}

/// Every file under `dir` (relative to the crate's root).
fn files_under(dir: &str, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(Path::new(ROOT).join(dir)).unwrap() {
        let entry = entry.unwrap();
        let path = format!("{dir}/{}", entry.file_name().to_str().unwrap());
        if entry.file_type().unwrap().is_dir() {
            files_under(&path, found);
        } else {
            found.push(path);
        }
    }
}

#[test]
fn the_package_ships_every_file_the_code_and_tests_read() {
    let shipped = packaged();
    let read = read_by_code();
    // The scan sees what it must: the kernel source the unit tests compile for the CPU, the fixtures, the
    // sample built into the library.
    for known in ["kernels/convert.cu", "tests/fixtures", "assets/sample.mp4"] {
        assert!(
            read.iter().any(|(path, _)| path == known),
            "the scan missed {known}: {read:?}"
        );
    }
    let mut missing = Vec::new();
    for (path, at) in &read {
        let mut files = Vec::new();
        if Path::new(ROOT).join(path).is_dir() {
            files_under(path, &mut files);
        } else {
            files.push(path.clone());
        }
        for file in files {
            if !shipped.contains(&file) {
                missing.push(format!("{file} (read at {at})"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "Cargo.toml's `include` leaves out files the crate reads:\n{}",
        missing.join("\n")
    );
}

/// CI (`.ci/run`) runs the README's test command, its second command block, word for word. `.ci/` is not
/// packaged: the packaged crate has nothing to compare.
#[test]
fn ci_runs_the_readmes_test_command() {
    let Ok(ci) = std::fs::read_to_string(Path::new(ROOT).join(".ci/run")) else {
        eprintln!("SKIPPED: no .ci/run here (a packaged crate)");
        return;
    };
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let command = readme
        .split("```sh\n")
        .nth(2)
        .and_then(|block| block.lines().next())
        .expect("the README's second sh block");
    assert!(
        command.starts_with("cargo test "),
        "the README's second command is not the tests': {command}"
    );
    assert!(
        ci.lines().any(|line| line
            .strip_prefix(command)
            .is_some_and(|rest| rest.starts_with(" || "))),
        ".ci/run does not run the README's test command `{command}`"
    );
}
