//! The layering of `src/`, checked from the source text: stages import only earlier stages and the layers below
//! them (never a later one), the graph of which file imports from which has no cycle, and the `cuda` feature is
//! confined to the device layer, the NVDEC decoder's module swap, `ffi/cuda` and the accessors that expose
//! cudarc types.
//!
//! How the graph is read: every `crate::…`, `super::…` and (in `use` items) child-relative path outside comments
//! (so intra-doc links do not count) is resolved to the file that defines the item, following re-exports
//! (`pub use`, `pub(crate) use`) through `mod.rs` files and modules swapped by `#[cfg_attr(…, path = "…")]` (an
//! edge to each variant). Test code is left out: files declared under `#[cfg(test)]` and inline
//! `#[cfg(test)] mod … {` blocks (the end of a file, by this project's convention). `src/bin` is a client of the
//! library, not part of it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module of the crate: its files (two for a feature-swapped module) and, per file, its code without
/// comments and test modules.
struct Crate {
    /// Module path ("crate::device::kind") → files.
    modules: BTreeMap<String, Vec<PathBuf>>,
    /// File → (module path, code).
    files: BTreeMap<PathBuf, (String, String)>,
}

fn strip_comments(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

/// The code of a file as the layering sees it: no comments, nothing after an inline test module.
fn code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() == "#[cfg(test)]" {
            let next = lines[i + 1..].iter().find(|l| !l.trim().starts_with("#["));
            if next
                .is_some_and(|l| l.trim_start().starts_with("mod ") && l.trim_end().ends_with('{'))
            {
                break;
            }
        }
        out.push_str(strip_comments(line));
        out.push('\n');
    }
    out
}

/// The `mod` declarations of a file's code: (name, files it may live in, test-only).
fn declared_modules(
    dir: &Path,
    is_mod_rs: bool,
    own: &str,
    text: &str,
) -> Vec<(String, Vec<PathBuf>, bool)> {
    let base = if is_mod_rs {
        dir.to_path_buf()
    } else {
        dir.join(own)
    };
    let mut out = Vec::new();
    let (mut paths, mut test) = (Vec::new(), false);
    for line in text.lines().map(str::trim) {
        if let Some(i) = line.find("path = \"") {
            // A `path` attribute outside an inline module is relative to the declaring file's directory,
            // in a `mod.rs` or not.
            let rest = &line[i + 8..];
            paths.push(dir.join(&rest[..rest.find('"').unwrap()]));
        } else if line == "#[cfg(test)]" {
            test = true;
        } else if let Some(decl) = line
            .strip_prefix("pub(crate) mod ")
            .or_else(|| line.strip_prefix("pub mod "))
            .or_else(|| line.strip_prefix("mod "))
        {
            if let Some(name) = decl.strip_suffix(';') {
                let files = if paths.is_empty() {
                    vec![
                        base.join(format!("{name}.rs")),
                        base.join(name).join("mod.rs"),
                    ]
                } else {
                    std::mem::take(&mut paths)
                };
                out.push((name.to_owned(), files, test));
            }
            paths.clear();
            test = false;
        } else if !line.starts_with("#[") {
            paths.clear();
            test = false;
        }
    }
    out
}

fn load() -> Crate {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut krate = Crate {
        modules: BTreeMap::new(),
        files: BTreeMap::new(),
    };
    let mut queue = vec![("crate".to_owned(), src.join("lib.rs"))];
    while let Some((module, file)) = queue.pop() {
        let text = std::fs::read_to_string(&file).unwrap();
        let is_mod_rs = file.ends_with("mod.rs") || file.ends_with("lib.rs");
        let own = file.file_stem().unwrap().to_str().unwrap().to_owned();
        for (name, candidates, test) in
            declared_modules(file.parent().unwrap(), is_mod_rs, &own, &code(&text))
        {
            if test {
                continue;
            }
            let child = format!("{module}::{name}");
            for f in candidates.into_iter().filter(|f| f.is_file()) {
                krate
                    .modules
                    .entry(child.clone())
                    .or_default()
                    .push(f.clone());
                queue.push((child.clone(), f));
            }
        }
        krate
            .modules
            .entry(module.clone())
            .or_default()
            .push(file.clone());
        krate.files.insert(file, (module, code(&text)));
    }
    krate.modules.values_mut().for_each(|v| v.dedup());
    krate
}

/// Expands a `use` tree (`a::{b, c::{d, e}}`, `x as y`) into paths, with the name each brings in scope.
fn expand(tree: &str) -> Vec<(String, String)> {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let prefix = tree[..open].trim_end_matches("::").trim();
        let inner = &tree[open + 1..tree.rfind('}').unwrap()];
        let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
        for (i, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&inner[start..]);
        return parts
            .into_iter()
            .filter(|p| !p.trim().is_empty())
            .flat_map(expand)
            .map(|(path, name)| match path.as_str() {
                "self" => (
                    prefix.to_owned(),
                    prefix.rsplit("::").next().unwrap().to_owned(),
                ),
                _ => (format!("{prefix}::{path}"), name),
            })
            .collect();
    }
    match tree.split_once(" as ") {
        Some((path, alias)) => vec![(path.trim().to_owned(), alias.trim().to_owned())],
        None => vec![(
            tree.to_owned(),
            tree.rsplit("::").next().unwrap().to_owned(),
        )],
    }
}

/// The `use` items of a file's code, expanded: (is a re-export, path, name in scope).
fn uses(code: &str) -> Vec<(bool, String, String)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].trim_end();
        let item_start = before.is_empty()
            || before.ends_with(';')
            || before.ends_with('}')
            || before.ends_with(']')
            || before.ends_with('{')
            || before.ends_with("pub")
            || before.ends_with("pub(crate)");
        let is_word = i == 0 || !rest[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let end = rest[i..].find(';').map_or(rest.len(), |e| i + e);
        if item_start && is_word {
            let reexport = before.ends_with("pub") || before.ends_with("pub(crate)");
            for (path, name) in expand(&rest[i + 4..end]) {
                out.push((reexport, path.split_whitespace().collect(), name));
            }
        }
        rest = &rest[i + 4..];
    }
    out
}

impl Crate {
    /// The absolute module path of `path` (as written in `module`), or `None` for other crates.
    fn absolute(&self, module: &str, path: &str) -> Option<Vec<String>> {
        let mut segs: Vec<&str> = path.split("::").collect();
        let mut base: Vec<String> = module.split("::").map(str::to_owned).collect();
        match segs[0] {
            "crate" => {
                base.truncate(1);
                segs.remove(0);
            }
            "super" => {
                while segs.first() == Some(&"super") {
                    segs.remove(0);
                    base.pop();
                }
            }
            "self" => {
                segs.remove(0);
            }
            first if self.modules.contains_key(&format!("{module}::{first}")) => {}
            _ => return None,
        }
        base.extend(segs.iter().map(|s| (*s).to_owned()));
        Some(base)
    }

    /// The files defining the item at `path` (absolute segments), following re-exports.
    fn resolve(&self, path: &[String], depth: usize) -> Vec<PathBuf> {
        let (mut len, mut module) = (path.len(), None);
        while len > 0 {
            let m = path[..len].join("::");
            if self.modules.contains_key(&m) {
                module = Some(m);
                break;
            }
            len -= 1;
        }
        let Some(module) = module else {
            return Vec::new();
        };
        let files = self.modules[&module].clone();
        if len == path.len() || depth > 8 {
            return files;
        }
        let name = &path[len];
        let mut out = Vec::new();
        for file in &files {
            let (_, code) = &self.files[file];
            let reexported = uses(code).into_iter().find(|(re, _, n)| *re && n == name);
            match reexported.and_then(|(_, p, _)| self.absolute(&module, &p)) {
                Some(target) => out.extend(self.resolve(&target, depth + 1)),
                None => out.push(file.clone()),
            }
        }
        out
    }

    /// Which files each file depends on.
    fn graph(&self) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
        let mut graph = BTreeMap::new();
        for (file, (module, code)) in &self.files {
            let mut paths: Vec<String> = uses(code).into_iter().map(|(_, p, _)| p).collect();
            // Paths written inline in the code.
            for prefix in ["crate::", "super::"] {
                let mut rest = code.as_str();
                while let Some(i) = rest.find(prefix) {
                    let word_start = i == 0
                        || !rest[..i]
                            .ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':');
                    let tail = &rest[i..];
                    let end = tail
                        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                        .unwrap_or(tail.len());
                    if word_start {
                        paths.push(tail[..end].trim_end_matches(':').to_owned());
                    }
                    rest = &rest[i + prefix.len()..];
                }
            }
            let deps: &mut BTreeSet<PathBuf> = graph.entry(file.clone()).or_default();
            for p in paths {
                if let Some(abs) = self.absolute(module, &p) {
                    deps.extend(self.resolve(&abs, 0).into_iter().filter(|f| f != file));
                }
            }
        }
        graph
    }
}

fn short(p: &Path) -> String {
    let s = p.to_string_lossy();
    s[s.find("/src/").map_or(0, |i| i + 1)..].to_owned()
}

#[test]
fn the_import_graph_of_src_has_no_cycle() {
    let krate = load();
    assert!(
        krate.files.len() > 40,
        "read only {} files",
        krate.files.len()
    );
    let graph = krate.graph();
    // The resolver sees through re-exports: the device layer's public types come from its leaf module.
    let error = &graph[&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/error.rs")];
    assert!(
        error.iter().any(|f| f.ends_with("src/device_kind.rs"))
            && !error.iter().any(|f| f.ends_with("device/mod.rs")),
        "{error:?}"
    );
    // The settings use the errors, so the errors use no setting (the device type is a leaf of its own).
    assert!(
        !error
            .iter()
            .any(|f| f.to_string_lossy().contains("/src/settings/")),
        "{error:?}"
    );
    // Depth-first search for a back edge.
    fn visit(
        node: &PathBuf,
        graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        state: &mut BTreeMap<PathBuf, u8>,
        stack: &mut Vec<PathBuf>,
        cycles: &mut Vec<String>,
    ) {
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                0 => visit(next, graph, state, stack, cycles),
                1 => {
                    let at = stack.iter().position(|n| n == next).unwrap();
                    let mut cycle: Vec<String> = stack[at..].iter().map(|p| short(p)).collect();
                    cycle.push(short(next));
                    cycles.push(cycle.join(" -> "));
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
    }
    let (mut state, mut cycles) = (BTreeMap::new(), Vec::new());
    for node in graph.keys() {
        if !state.contains_key(node) {
            visit(node, &graph, &mut state, &mut Vec::new(), &mut cycles);
        }
    }
    assert!(
        cycles.is_empty(),
        "import cycles in src/:\n{}",
        cycles.join("\n")
    );
}

/// The layers of `src/`, lowest first: a file may import from its own layer and the layers before it. Leaf
/// types and settings, then the unsafe FFI layer, the device layer, and the pipeline's stages in order; the
/// front ends (the crate root's re-exports, the service, the JSON report, the fuzzing entry points) on top.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "leaf types",
        &[
            "src/error.rs",
            "src/error_code.rs",
            "src/device_kind.rs",
            "src/video.rs",
            "src/signal.rs",
            "src/info.rs",
            "src/orientation.rs",
            "src/settings/",
        ],
    ),
    ("ffi", &["src/ffi/"]),
    ("device", &["src/device/"]),
    ("source", &["src/source/"]),
    ("demux", &["src/demux/"]),
    ("decode", &["src/decode/"]),
    ("sample", &["src/sample/"]),
    ("transform", &["src/transform/"]),
    ("assembly", &["src/assembly/"]),
    ("operator", &["src/operator/"]),
    ("reader", &["src/reader/"]),
    ("mux", &["src/mux/"]),
    (
        "front ends",
        &[
            "src/lib.rs",
            "src/server/",
            "src/report.rs",
            "src/fuzzing.rs",
        ],
    ),
];

fn layer(file: &Path) -> usize {
    let name = short(file);
    LAYERS
        .iter()
        .position(|(_, prefixes)| prefixes.iter().any(|p| name.starts_with(p)))
        .unwrap_or_else(|| panic!("{name} is in no layer: add its folder to LAYERS"))
}

#[test]
fn no_stage_imports_a_later_one() {
    let krate = load();
    let graph = krate.graph();
    let mut upward = Vec::new();
    for (file, deps) in &graph {
        for dep in deps {
            if layer(dep) > layer(file) {
                upward.push(format!(
                    "{} ({}) -> {} ({})",
                    short(file),
                    LAYERS[layer(file)].0,
                    short(dep),
                    LAYERS[layer(dep)].0
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports from a later stage:\n{}",
        upward.join("\n")
    );
    // The check sees an edge in each direction it forbids and allows.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let worker = &graph[&root.join("operator/worker.rs")];
    assert!(worker.contains(&root.join("decode/mod.rs")), "{worker:?}");
    assert!(layer(&root.join("operator/worker.rs")) > layer(&root.join("decode/mod.rs")));
}

#[test]
fn the_cuda_feature_stays_in_its_layers() {
    let krate = load();
    let allowed = [
        "src/lib.rs",
        "src/assembly/batch.rs", // Batch::cuda() and Batch::cuda_stream(), which expose cudarc types
        "src/decode/mod.rs",     // the NVDEC decoder's module swap
        "src/device/",
        "src/ffi/cuda/",
    ];
    let mut outside = Vec::new();
    for file in krate.files.keys() {
        let name = short(file);
        // Test modules included: a test that needs the feature skips at run time instead.
        let text = std::fs::read_to_string(file).unwrap();
        let uses_feature = text
            .lines()
            .any(|l| strip_comments(l).contains("feature = \"cuda\""));
        if uses_feature && !allowed.iter().any(|a| name.starts_with(a)) {
            outside.push(name);
        }
    }
    // The NVDEC decoders, declared by `path` inside the feature's module, are part of the graph.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    assert!(
        krate.files.contains_key(&root.join("decode/nvcuvid.rs")),
        "decode/nvcuvid.rs is missing from the graph"
    );
    assert!(
        outside.is_empty(),
        "`cuda` cfg outside its layers: {outside:?}"
    );
    // In batch.rs, only on the two accessors.
    let batch =
        &krate.files[&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/assembly/batch.rs")].1;
    let lines: Vec<&str> = batch.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.contains("feature = \"cuda\"") {
            let item = lines[i + 1..]
                .iter()
                .find(|l| !l.trim().is_empty())
                .unwrap();
            assert!(
                item.contains("pub fn cuda(") || item.contains("pub fn cuda_stream("),
                "batch.rs: cfg on {item}"
            );
        }
    }
}
