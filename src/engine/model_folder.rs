//! Where a model's files are: a local folder or file, a `file:` URL, or a Hub id (`org/name`)
//! found in the local Hugging Face cache. Nothing is downloaded.
//!
//! The cache is the one `huggingface_hub` writes: `HF_HUB_CACHE` (or its older name
//! `HUGGINGFACE_HUB_CACHE`), else `HF_HOME/hub`, else `XDG_CACHE_HOME/huggingface/hub`, else
//! `~/.cache/huggingface/hub`; a caller's `cache_dir` replaces them all. In it, a model lives in
//! `models--org--name/`, each commit's files in `snapshots/<commit>/`, and `refs/<revision>` holds
//! the commit a branch or tag points to. A revision may also be a commit hash itself.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{Error, ErrorKind};

/// The tokenizer file of a model folder.
pub const TOKENIZER_FILE: &str = "tokenizer.json";

/// A Mistral model's tokenizer file in Mistral's own format, read where a folder has no
/// tokenizer.json.
pub const TEKKEN_FILE: &str = "tekken.json";

/// The revision used when none is asked for, as `huggingface_hub`'s default.
pub const DEFAULT_REVISION: &str = "main";

/// How many of a folder's entries an error lists before it says how many more there are.
const LISTED_ENTRIES: usize = 20;

/// Where to look for a Hub id, and which revision to take.
#[derive(Debug, Clone, Default)]
pub struct HubOptions {
    /// The Hugging Face cache to look in, instead of the one the environment names.
    pub cache_dir: Option<PathBuf>,
    /// A branch, tag or commit hash; [`DEFAULT_REVISION`] when `None`.
    pub revision: Option<String>,
}

/// What a path or id names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// A folder with a tokenizer.json (a local one, or a snapshot in the cache).
    Folder(PathBuf),
    /// A tokenizer.json file itself.
    File(PathBuf),
}

/// Finds `path_or_id`: an existing folder or file as it is (the revision then does not apply),
/// else a Hub id in the cache that `options` and the environment (`env`, the process environment
/// in use) name. A revision that is empty or has an empty, `.` or `..` part is refused
/// ([`ErrorKind::OutOfRange`]): it names a file under `refs/`.
///
/// A folder must hold a tokenizer.json; the error otherwise lists what it holds. An id not in the
/// cache is an error that names every place looked in and how to download the model.
pub fn locate(
    path_or_id: &str,
    options: &HubOptions,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Located, Error> {
    if path_or_id.is_empty() {
        return Err(load_error(
            "the path or Hub id is empty; pass a model folder, a tokenizer.json or an id like \
             'org/name'"
                .to_owned(),
        ));
    }
    if let Some(revision) = &options.revision
        && (revision.is_empty()
            || revision
                .split('/')
                .any(|part| part.is_empty() || part == "." || part == ".."))
    {
        return Err(Error::new(
            ErrorKind::OutOfRange,
            format!("revision '{revision}' is not a branch, tag or commit hash"),
        ));
    }
    let local = Path::new(path_or_id);
    if local.is_dir() {
        return folder_with_tokenizer(local).map(Located::Folder);
    }
    if local.is_file() {
        return Ok(Located::File(local.to_owned()));
    }
    if !is_hub_id(path_or_id) {
        return Err(load_error(format!(
            "'{path_or_id}' is neither a file nor a folder, nor a Hub id like 'org/name'"
        )));
    }
    let (cache, chosen_by) = match &options.cache_dir {
        Some(dir) => (dir.clone(), "the cacheDir option".to_owned()),
        None => hub_cache(env),
    };
    let revision = options.revision.as_deref().unwrap_or(DEFAULT_REVISION);
    let repo = cache.join(format!("models--{}", path_or_id.replace('/', "--")));
    let how_to_get = format!(
        "batchtok downloads nothing; fetch the model into the cache with \
         `huggingface-cli download {path_or_id}` (or `hf download {path_or_id}`){}, or pass a \
         folder that holds its tokenizer.json",
        if options.revision.is_some() {
            format!(" --revision {revision}")
        } else {
            String::new()
        }
    );
    let looked = format!(
        "looked for a local folder or file '{path_or_id}' (none), then in the Hugging Face cache \
         {} (chosen by {chosen_by})",
        cache.display()
    );
    if !repo.is_dir() {
        return Err(load_error(format!(
            "'{path_or_id}' is not in the Hugging Face cache: {looked}, which has no {}. \
             {how_to_get}",
            repo.display()
        )));
    }
    let commit = if is_commit_hash(revision) && repo.join("snapshots").join(revision).is_dir() {
        revision.to_owned()
    } else {
        let reference = repo.join("refs").join(revision);
        match std::fs::read_to_string(&reference) {
            Ok(commit) => commit.trim().to_owned(),
            Err(_) => {
                return Err(load_error(format!(
                    "revision '{revision}' of '{path_or_id}' is not in the Hugging Face cache: \
                     {looked}; it has no {} and no snapshot of that name (refs: {}; snapshots: \
                     {}). {how_to_get}",
                    reference.display(),
                    list_entries(&repo.join("refs")),
                    list_entries(&repo.join("snapshots")),
                )));
            }
        }
    };
    let snapshot = repo.join("snapshots").join(&commit);
    if !snapshot.is_dir() {
        return Err(load_error(format!(
            "revision '{revision}' of '{path_or_id}' points to commit {commit}, whose snapshot {} \
             is missing ({looked}). {how_to_get}",
            snapshot.display()
        )));
    }
    folder_with_tokenizer(&snapshot)
        .map(Located::Folder)
        .map_err(|e| load_error(format!("{} {how_to_get}", e.message())))
}

/// The Hugging Face cache the environment names, and the variable that named it.
pub fn hub_cache(env: &dyn Fn(&str) -> Option<OsString>) -> (PathBuf, String) {
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    for name in ["HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"] {
        if let Some(dir) = set(name) {
            return (PathBuf::from(dir), name.to_owned());
        }
    }
    if let Some(home) = set("HF_HOME") {
        return (PathBuf::from(home).join("hub"), "HF_HOME".to_owned());
    }
    if let Some(cache) = set("XDG_CACHE_HOME") {
        return (
            PathBuf::from(cache).join("huggingface").join("hub"),
            "XDG_CACHE_HOME".to_owned(),
        );
    }
    let home = set("HOME")
        .or_else(|| set("USERPROFILE"))
        .map_or_else(|| PathBuf::from("~"), PathBuf::from);
    (
        home.join(".cache").join("huggingface").join("hub"),
        "the default, as no HF_HUB_CACHE, HF_HOME or XDG_CACHE_HOME is set".to_owned(),
    )
}

/// The local path of a `file:` URL, as Node's `url.fileURLToPath` reads one: the host must be
/// empty or `localhost`, the path is percent-decoded, and an encoded `/` is refused.
pub fn file_url_to_path(url: &str) -> Result<PathBuf, Error> {
    let bad = |why: &str| {
        load_error(format!(
            "'{url}' is not a file URL batchtok can read: {why}. Pass a path, or a URL made with \
             url.pathToFileURL(path)"
        ))
    };
    let Some(rest) = url
        .get(..5)
        .filter(|scheme| scheme.eq_ignore_ascii_case("file:"))
        .map(|_| &url[5..])
    else {
        return Err(bad("only file: URLs name local files"));
    };
    // `file:///p`, `file://localhost/p`; a bare `file:/p` has no authority.
    let path = match rest.strip_prefix("//") {
        Some(after) => {
            let (host, path) = after.split_at(after.find('/').unwrap_or(after.len()));
            if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
                return Err(bad(&format!("its host '{host}' is not empty or localhost")));
            }
            path
        }
        None => rest,
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    if path.is_empty() {
        return Err(bad("it has no path"));
    }
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = path
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad("it has a % not followed by two hex digits"))?;
            if hex == b'/' || (cfg!(windows) && hex == b'\\') {
                return Err(bad("it has an encoded path separator"));
            }
            decoded.push(hex);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    let decoded = String::from_utf8(decoded).map_err(|_| bad("its path is not UTF-8"))?;
    if cfg!(windows) {
        // `/C:/dir` names `C:\dir`.
        let trimmed = decoded.strip_prefix('/').unwrap_or(&decoded);
        return Ok(PathBuf::from(trimmed.replace('/', "\\")));
    }
    Ok(PathBuf::from(decoded))
}

/// Whether `text` has the shape of a Hub model id: `name` or `org/name`, each part of letters,
/// digits, `-`, `_` and `.`, not starting with `.` or `-`.
fn is_hub_id(text: &str) -> bool {
    let parts: Vec<&str> = text.split('/').collect();
    parts.len() <= 2
        && parts.iter().all(|part| {
            !part.is_empty()
                && !part.starts_with(['.', '-'])
                && !part.contains("..")
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
}

/// Whether `revision` is a full commit hash (40 hex digits).
fn is_commit_hash(revision: &str) -> bool {
    revision.len() == 40 && revision.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `folder`, if it holds a tokenizer.json or a tekken.json; else an error listing what it holds.
fn folder_with_tokenizer(folder: &Path) -> Result<PathBuf, Error> {
    if folder.join(TOKENIZER_FILE).is_file() || folder.join(TEKKEN_FILE).is_file() {
        return Ok(folder.to_owned());
    }
    Err(load_error(format!(
        "the folder {} has no {TOKENIZER_FILE} (it holds: {}); batchtok reads a model's \
         tokenizer.json, as transformers' fast tokenizers do, or a Mistral model's {TEKKEN_FILE}",
        folder.display(),
        list_entries(folder)
    )))
}

/// The names in `folder`, sorted, for an error message.
fn list_entries(folder: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return "nothing: it cannot be read".to_owned();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => format!("{name}/"),
                _ => name,
            }
        })
        .collect();
    if names.is_empty() {
        return "nothing".to_owned();
    }
    names.sort();
    let more = names.len().saturating_sub(LISTED_ENTRIES);
    names.truncate(LISTED_ENTRIES);
    let mut listed = names.join(", ");
    if more > 0 {
        listed.push_str(&format!(" and {more} more"));
    }
    listed
}

fn load_error(message: String) -> Error {
    Error::new(ErrorKind::Load, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary folder holding `files` (relative path, text), removed when dropped.
    struct TempTree(PathBuf);

    impl TempTree {
        fn with(files: &[(&str, &str)]) -> TempTree {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let root = std::env::temp_dir().join(format!(
                "batchtok-model-folder-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&root).unwrap();
            for (name, text) in files {
                let file = root.join(name);
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(file, text).unwrap();
            }
            TempTree(root)
        }

        fn path(&self, relative: &str) -> String {
            self.0.join(relative).display().to_string()
        }
    }

    impl Drop for TempTree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const COMMIT_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const COMMIT_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    /// A cache with `org/name` at two commits, `main` on the first and `dev` on the second.
    fn cache() -> TempTree {
        TempTree::with(&[
            ("models--org--name/refs/main", &format!("{COMMIT_A}\n")),
            ("models--org--name/refs/dev", COMMIT_B),
            (
                &format!("models--org--name/snapshots/{COMMIT_A}/tokenizer.json"),
                "{}",
            ),
            (
                &format!("models--org--name/snapshots/{COMMIT_B}/tokenizer.json"),
                "{}",
            ),
            (
                &format!("models--org--name/snapshots/{COMMIT_B}/tokenizer_config.json"),
                "{}",
            ),
        ])
    }

    fn no_env(_: &str) -> Option<OsString> {
        None
    }

    fn with_cache(tree: &TempTree, revision: Option<&str>) -> HubOptions {
        HubOptions {
            cache_dir: Some(tree.0.clone()),
            revision: revision.map(str::to_owned),
        }
    }

    #[test]
    fn an_id_resolves_to_the_snapshot_its_revision_points_to() {
        let tree = cache();
        let snapshot =
            |commit: &str| Located::Folder(tree.0.join("models--org--name/snapshots").join(commit));
        assert_eq!(
            locate("org/name", &with_cache(&tree, None), &no_env).unwrap(),
            snapshot(COMMIT_A)
        );
        assert_eq!(
            locate("org/name", &with_cache(&tree, Some("dev")), &no_env).unwrap(),
            snapshot(COMMIT_B)
        );
        assert_eq!(
            locate("org/name", &with_cache(&tree, Some(COMMIT_B)), &no_env).unwrap(),
            snapshot(COMMIT_B)
        );
    }

    /// `huggingface_hub` keeps each file once in `blobs/` and links it from the snapshots.
    #[cfg(unix)]
    #[test]
    fn snapshot_files_may_be_links_to_blobs() {
        let tree = TempTree::with(&[
            ("models--org--linked/refs/main", COMMIT_A),
            ("models--org--linked/blobs/0123abcd", "{}"),
        ]);
        let snapshot = tree.0.join("models--org--linked/snapshots").join(COMMIT_A);
        std::fs::create_dir_all(&snapshot).unwrap();
        std::os::unix::fs::symlink("../../blobs/0123abcd", snapshot.join(TOKENIZER_FILE)).unwrap();
        assert_eq!(
            locate("org/linked", &with_cache(&tree, None), &no_env).unwrap(),
            Located::Folder(snapshot)
        );
    }

    #[test]
    fn the_cache_comes_from_the_environment_in_huggingface_hubs_order() {
        let env_of = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| OsString::from(value))
            }
        };
        // (the variables set, the cache they name, the variable the reason names)
        type Case = (
            &'static [(&'static str, &'static str)],
            &'static str,
            &'static str,
        );
        let cases: [Case; 5] = [
            (
                &[("HF_HUB_CACHE", "/a"), ("HF_HOME", "/b")],
                "/a",
                "HF_HUB_CACHE",
            ),
            (
                &[("HUGGINGFACE_HUB_CACHE", "/a"), ("HF_HOME", "/b")],
                "/a",
                "HUGGINGFACE_HUB_CACHE",
            ),
            (
                &[("HF_HOME", "/b"), ("XDG_CACHE_HOME", "/c")],
                "/b/hub",
                "HF_HOME",
            ),
            (
                &[("XDG_CACHE_HOME", "/c"), ("HOME", "/h")],
                "/c/huggingface/hub",
                "XDG_CACHE_HOME",
            ),
            (
                &[("HF_HUB_CACHE", ""), ("HOME", "/h")],
                "/h/.cache/huggingface/hub",
                "the default",
            ),
        ];
        for (pairs, dir, why) in cases {
            let (found, chosen_by) = hub_cache(&env_of(pairs));
            assert_eq!(found, PathBuf::from(dir), "{pairs:?}");
            assert!(chosen_by.starts_with(why), "{chosen_by}");
        }
        let tree = cache();
        let cache_dir = tree.0.clone().into_os_string();
        let env = move |name: &str| (name == "HF_HUB_CACHE").then(|| cache_dir.clone());
        assert!(matches!(
            locate("org/name", &HubOptions::default(), &env),
            Ok(Located::Folder(_))
        ));
    }

    #[test]
    fn a_missing_id_names_every_place_looked_and_how_to_download_it() {
        let tree = cache();
        let error = locate("org/other", &with_cache(&tree, None), &no_env).unwrap_err();
        let message = error.message();
        assert_eq!(error.kind(), ErrorKind::Load);
        for part in [
            "local folder or file 'org/other'",
            &tree.0.display().to_string(),
            "the cacheDir option",
            "models--org--other",
            "huggingface-cli download org/other",
            "hf download org/other",
        ] {
            assert!(message.contains(part), "{part:?} not in {message}");
        }
        let error = locate("org/name", &with_cache(&tree, Some("v2")), &no_env).unwrap_err();
        assert!(
            error.message().contains("revision 'v2'"),
            "{}",
            error.message()
        );
        assert!(
            error.message().contains("refs: dev, main"),
            "{}",
            error.message()
        );
        assert!(
            error.message().contains("--revision v2"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn a_folder_without_tokenizer_json_lists_what_it_holds() {
        let tree = TempTree::with(&[("model/config.json", "{}"), ("model/weights/x", "")]);
        let error = locate(&tree.path("model"), &HubOptions::default(), &no_env).unwrap_err();
        assert!(
            error
                .message()
                .contains("has no tokenizer.json (it holds: config.json, weights/)"),
            "{}",
            error.message()
        );
        let tree = TempTree::with(&[("tokenizer.json", "{}")]);
        assert_eq!(
            locate(
                &tree.path("tokenizer.json"),
                &HubOptions::default(),
                &no_env
            )
            .unwrap(),
            Located::File(tree.0.join("tokenizer.json"))
        );
    }

    #[test]
    fn a_revision_cannot_name_a_file_outside_refs() {
        let tree = cache();
        for revision in ["", "../../x", "a//b", "./main"] {
            let error =
                locate("org/name", &with_cache(&tree, Some(revision)), &no_env).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::OutOfRange, "{revision}");
        }
        let nested = TempTree::with(&[
            ("models--org--name/refs/refs/pr/1", COMMIT_A),
            (
                &format!("models--org--name/snapshots/{COMMIT_A}/tokenizer.json"),
                "{}",
            ),
        ]);
        assert!(locate("org/name", &with_cache(&nested, Some("refs/pr/1")), &no_env).is_ok());
    }

    #[test]
    fn a_path_that_is_no_file_and_no_id_says_so() {
        for missing in ["/no/such/folder/at/all", "./x/y/z", "a//b", ""] {
            let error = locate(missing, &HubOptions::default(), &no_env).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::Load, "{missing}");
        }
        assert!(is_hub_id("gpt2") && is_hub_id("Org-1/model_v2.5"));
        assert!(!is_hub_id("../x") && !is_hub_id("a/b/c") && !is_hub_id("a b"));
    }

    #[cfg(unix)]
    #[test]
    fn file_urls_read_as_node_reads_them() {
        let ok = [
            (
                "file:///tmp/a%20b/tokenizer.json",
                "/tmp/a b/tokenizer.json",
            ),
            ("file://localhost/tmp/x", "/tmp/x"),
            ("FILE:///tmp/%E6%97%A5", "/tmp/日"),
            ("file:/tmp/x?query#hash", "/tmp/x"),
        ];
        for (url, path) in ok {
            assert_eq!(file_url_to_path(url).unwrap(), PathBuf::from(path), "{url}");
        }
        for (url, why) in [
            ("https://example.com/tokenizer.json", "only file: URLs"),
            ("file://host/tmp/x", "host 'host'"),
            ("file:///tmp/a%2Fb", "encoded path separator"),
            ("file:///tmp/%zz", "two hex digits"),
            ("file://", "no path"),
        ] {
            let error = file_url_to_path(url).unwrap_err();
            assert!(error.message().contains(why), "{url}: {}", error.message());
        }
    }
}
