//! Every relative link of README.md and docs/ (and the crates' READMEs) points at a file that
//! exists: a moved or renamed file breaks this test, not a reader's click.

use std::path::{Path, PathBuf};

/// The repository's root (this crate lives in `tests/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// The Markdown files to check: README.md, every crate's README.md, everything under docs/.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut stack = vec![root.join("docs")];
    if let Ok(crates) = std::fs::read_dir(root.join("crates")) {
        for entry in crates.flatten() {
            let readme = entry.path().join("README.md");
            if readme.exists() {
                files.push(readme);
            }
        }
    }
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("docs/ is readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files
}

/// The targets of the inline links `[text](target)` of `text`, outside code blocks and code
/// spans.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        // Drop code spans: `[a](b)` inside backticks is not a link.
        let mut plain = String::new();
        for (k, part) in line.split('`').enumerate() {
            if k % 2 == 0 {
                plain.push_str(part);
            }
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    targets
}

/// Whether `target` is a link to a file of the repository (not a web address, a mail address
/// or a heading of the same page).
fn is_relative(target: &str) -> bool {
    !(target.is_empty()
        || target.starts_with('#')
        || target.contains("://")
        || target.starts_with("mailto:"))
}

#[test]
fn every_relative_link_in_the_docs_points_at_a_file() {
    let root = root();
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files(&root) {
        let text = std::fs::read_to_string(&file).expect("a Markdown file is text");
        let dir = file.parent().expect("a file has a folder");
        for target in link_targets(&text).into_iter().filter(|t| is_relative(t)) {
            let path = target.split('#').next().unwrap_or_default();
            let path = path.split_whitespace().next().unwrap_or_default(); // [x](a.md "title")
            checked += 1;
            if !dir.join(path).exists() {
                let shown = file.strip_prefix(&root).unwrap_or(&file).display().to_string();
                broken.push(format!("{shown}: ({target})"));
            }
        }
    }
    // README.md links docs/ pages: at least those are found.
    assert!(checked >= 2, "only {checked} relative links found: is the scan broken?");
    assert!(broken.is_empty(), "broken relative links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_scanner_finds_links_and_skips_code() {
    let text =
        "see [a](docs/a.md) and `[b](no.md)`\n```\n[c](no.md)\n```\n[d](https://x.org) [e](#h)";
    let found = link_targets(text);
    assert_eq!(found, ["docs/a.md", "https://x.org", "#h"]);
    assert!(is_relative("docs/a.md") && !is_relative("https://x.org") && !is_relative("#h"));
}
