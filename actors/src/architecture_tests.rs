//! The layer table of `docs/architecture.md`, kept: every `crate::<module>` a non-test file of
//! this crate names must be of its own layer or below.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Module name → layer, read from the table under "## Layers" (`| 3 | `context` | … |`).
fn layers(doc: &str) -> BTreeMap<String, u32> {
    let section = doc.split("## Layers").nth(1).expect("docs/architecture.md has a Layers section");
    let mut out = BTreeMap::new();
    for row in section.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Some(layer) = cells.get(1).and_then(|c| c.parse::<u32>().ok()) else { continue };
        for module in cells[2].split(',').map(|m| m.trim().trim_matches('`')) {
            out.insert(module.to_owned(), layer);
        }
    }
    out
}

/// `text` without test code and comments: a `#[cfg(test)]` module runs to the end of its file
/// (this crate keeps them last), and `//` comments (docs included) name paths, not imports.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && lines.peek().is_some_and(|n| n.trim_start().starts_with("mod ") && n.ends_with('{'))
        {
            break;
        }
        let code = line.split("//").next().unwrap_or_default();
        out.push_str(code);
        out.push('\n');
    }
    out
}

fn is_test_file(rel: &Path) -> bool {
    let name = rel.file_name().unwrap().to_string_lossy();
    name == "tests.rs" || name.ends_with("_tests.rs") || rel.components().any(|c| c.as_os_str() == "tests")
}

/// Every upward use: `file: module (layer a) uses crate::other (layer b)`, and every module
/// the table does not place.
fn violations(files: &[(PathBuf, String)], layers: &BTreeMap<String, u32>) -> Vec<String> {
    let mut out = Vec::new();
    for (rel, text) in files {
        if is_test_file(rel) || rel == Path::new("lib.rs") {
            continue;
        }
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_owned();
        let Some(&own) = layers.get(&top) else {
            out.push(format!("{}: module `{top}` has no layer in docs/architecture.md", rel.display()));
            continue;
        };
        let code = code_of(text);
        let mut rest = code.as_str();
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let target: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            match layers.get(&target) {
                Some(&layer) if layer > own => {
                    out.push(format!("{}: `{top}` (layer {own}) uses `crate::{target}` (layer {layer})", rel.display()))
                }
                _ => {}
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path.strip_prefix(root).unwrap().to_path_buf(), text));
        }
    }
}

fn table() -> BTreeMap<String, u32> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md");
    layers(&std::fs::read_to_string(&doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display())))
}

#[test]
fn no_module_uses_one_of_a_higher_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    assert!(files.len() > 100, "the sources were found: {}", files.len());
    let table = table();
    assert_eq!(table.get("sessions"), Some(&1), "{table:?}");
    let found = violations(&files, &table);
    assert!(found.is_empty(), "imports that run up a layer:\n{}", found.join("\n"));
}

#[test]
fn an_upward_import_is_reported_and_test_code_and_comments_are_not() {
    let table = table();
    let file = |path: &str, text: &str| (PathBuf::from(path), text.to_owned());
    let files = [
        file("config/mod.rs", "use crate::time::UserZone;\nuse crate::engine::Engine;\n"),
        file(
            "policy/gate.rs",
            "/// See [`crate::sentinel`].\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::engine::Engine;\n}\n",
        ),
        file("policy/tests.rs", "use crate::agent::Agent;\n"),
        file("nowhere/mod.rs", "fn f() {}\n"),
    ];
    assert_eq!(
        violations(&files, &table),
        [
            "config/mod.rs: `config` (layer 0) uses `crate::engine` (layer 10)",
            "nowhere/mod.rs: module `nowhere` has no layer in docs/architecture.md",
        ]
    );
}
