//! The JS `Tokenizer`'s loaders off the main thread and from model folders (`fromPretrained`,
//! `load`, `loadJSON`, `whenReady`) and its model-config getters. Finding a folder or a Hub id is
//! the engine's (`engine::locate`); this file reads the arguments and hands the work to a libuv
//! thread for the async loaders.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use napi::bindgen_prelude::{Object, Unknown, ValueType};
use napi::{Env, Task};
use napi_derive::napi;

use super::args::{options_object, owned_file_contents, path_argument, property, string};
use super::errors::{ErrorClass, from_engine, js_error};
use super::tokenizer::{JSON_CONTENTS, JSON_ORIGIN, Tokenizer, promise};
use crate::engine::{self, HubOptions};

/// Options of `Tokenizer.fromPretrained`.
const PRETRAINED_OPTIONS: &[&str] = &["cacheDir", "revision"];

/// A tokenizer's named special tokens (unset ones are absent).
#[napi(object)]
pub struct SpecialTokens {
    /// The beginning-of-sequence token.
    pub bos: Option<String>,
    /// The end-of-sequence token.
    pub eos: Option<String>,
    /// The token for what the vocabulary cannot spell.
    pub unk: Option<String>,
    /// The separator between sequences.
    pub sep: Option<String>,
    /// The padding token.
    pub pad: Option<String>,
    /// The classifier token.
    pub cls: Option<String>,
    /// The mask token.
    pub mask: Option<String>,
    /// Further special tokens.
    pub additional: Vec<String>,
    /// Special tokens the model names for itself (`tokenizer_config.json`'s
    /// `extra_special_tokens` object, as `{ image_token: '<image>' }`), keyed as the file names
    /// them; chat templates see each as a variable of that name.
    pub extra: BTreeMap<String, String>,
}

/// What a loader reads: a model folder, a Hub id, a file or a file's contents.
enum LoadRequest {
    /// `fromPretrained`: a folder, a tokenizer.json or a Hub id.
    Pretrained(String, HubOptions),
    /// `load`: a tokenizer.json.
    File(PathBuf),
    /// `loadJSON`: a tokenizer.json's contents, copied out of JS.
    Json(Vec<u8>),
}

impl LoadRequest {
    /// Loads the tokenizer (taking the contents a `Json` request holds); a panic becomes an
    /// error, so it never unwinds into libuv or JS.
    fn run(&mut self) -> Result<engine::Tokenizer, engine::Error> {
        catch_unwind(AssertUnwindSafe(|| match self {
            LoadRequest::Pretrained(path_or_id, options) => {
                engine::Tokenizer::from_pretrained(path_or_id, options)
            }
            LoadRequest::File(path) => engine::Tokenizer::from_file(path),
            LoadRequest::Json(json) => {
                engine::Tokenizer::from_json_bytes(std::mem::take(json), JSON_ORIGIN)
            }
        }))
        .unwrap_or_else(|_| {
            Err(engine::Error::new(
                engine::ErrorKind::Engine,
                "batchtok panicked while loading the tokenizer; please report it with the file",
            ))
        })
    }
}

/// A load on a libuv thread: the event loop keeps running while the file is read and parsed.
pub struct LoadTask(LoadRequest);

impl Task for LoadTask {
    type Output = Result<engine::Tokenizer, engine::Error>;
    type JsValue = Tokenizer;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(self.0.run())
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Tokenizer> {
        output
            .map(|tokenizer| Tokenizer::new(Arc::new(tokenizer)))
            .map_err(|e| from_engine(&env, &e))
    }
}

/// `whenReady`'s wait on a libuv thread.
pub struct ReadyTask(Arc<engine::Tokenizer>);

impl Task for ReadyTask {
    type Output = Result<(), engine::Error>;
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<Self::Output> {
        // A panic in the build is already an error (`OpenAiEncoding`'s build catches it).
        Ok(self.0.wait_until_ready())
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<()> {
        output.map_err(|e| from_engine(&env, &e))
    }
}

/// `fromPretrained`'s path or id and options.
fn pretrained_request(
    env: &Env,
    path_or_id: &Unknown,
    options: Option<Unknown>,
    method: &str,
) -> napi::Result<LoadRequest> {
    let path_or_id = match path_or_id.get_type()? {
        ValueType::String => string(env, path_or_id, "pathOrId")?,
        _ => path_argument(env, path_or_id, "pathOrId")?
            .to_string_lossy()
            .into_owned(),
    };
    let path_or_id = match path_or_id.get(..5) {
        Some(scheme) if scheme.eq_ignore_ascii_case("file:") => {
            engine::file_url_to_path(&path_or_id)
                .map_err(|e| js_error(env, ErrorClass::Type, e.message()))?
                .to_string_lossy()
                .into_owned()
        }
        _ => path_or_id,
    };
    let mut hub = HubOptions::default();
    if let Some(options) = options_object(env, options, method, PRETRAINED_OPTIONS)? {
        if let Some(dir) = property(env, &options, c"cacheDir")? {
            hub.cache_dir = Some(path_argument(env, &dir, "options.cacheDir")?);
        }
        if let Some(revision) = property(env, &options, c"revision")? {
            hub.revision = Some(string(env, &revision, "options.revision")?);
        }
    }
    Ok(LoadRequest::Pretrained(path_or_id, hub))
}

/// The engine's special tokens as the JS object.
fn to_js_special_tokens(tokens: engine::SpecialTokens) -> SpecialTokens {
    SpecialTokens {
        bos: tokens.bos,
        eos: tokens.eos,
        unk: tokens.unk,
        sep: tokens.sep,
        pad: tokens.pad,
        cls: tokens.cls,
        mask: tokens.mask,
        additional: tokens.additional,
        extra: tokens.extra,
    }
}

#[napi]
impl Tokenizer {
    /// A model folder (its `tokenizer.json`, else a Mistral model's `tekken.json`, with
    /// `tokenizer_config.json`, `special_tokens_map.json` and `chat_template.jinja` where present),
    /// a `tokenizer.json`, or a
    /// Hub id (`'org/name'`) found in the local Hugging Face cache (`options.cacheDir`, else
    /// `HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`) at `options.revision`
    /// (a branch, tag or commit hash; default `'main'`). Nothing is downloaded: an id not in the
    /// cache rejects with an `Error` naming where it looked and how to download it. Read and
    /// parsed off the main thread.
    #[napi(
        catch_unwind,
        ts_args_type = "pathOrId: string | URL, options?: PretrainedOptions",
        ts_return_type = "Promise<Tokenizer>"
    )]
    pub fn from_pretrained<'env>(
        env: &'env Env,
        path_or_id: Unknown<'env>,
        options: Option<Unknown<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            Ok(LoadTask(pretrained_request(
                env,
                &path_or_id,
                options,
                "fromPretrained",
            )?))
        })
    }

    /// `fromPretrained` on the calling thread.
    #[napi(
        factory,
        catch_unwind,
        ts_args_type = "pathOrId: string | URL, options?: PretrainedOptions"
    )]
    pub fn from_pretrained_sync(
        env: Env,
        path_or_id: Unknown,
        options: Option<Unknown>,
    ) -> napi::Result<Tokenizer> {
        let mut request = pretrained_request(&env, &path_or_id, options, "fromPretrainedSync")?;
        let tokenizer = request.run().map_err(|e| from_engine(&env, &e))?;
        Ok(Tokenizer::new(Arc::new(tokenizer)))
    }

    /// `fromFile` off the main thread: a `tokenizer.json` path, `file:` URL or `URL`, read and
    /// parsed on a libuv thread so the event loop keeps running.
    #[napi(
        catch_unwind,
        ts_args_type = "path: string | URL",
        ts_return_type = "Promise<Tokenizer>"
    )]
    pub fn load<'env>(env: &'env Env, path: Unknown<'env>) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            Ok(LoadTask(LoadRequest::File(path_argument(
                env, &path, "path",
            )?)))
        })
    }

    /// `fromJSON` off the main thread: the text of a `tokenizer.json` (a string, or its bytes in a
    /// `Uint8Array`) is copied as UTF-8 on the calling thread, milliseconds for a large file, and
    /// parsed on a libuv thread so the event loop keeps running.
    #[napi(
        js_name = "loadJSON",
        catch_unwind,
        ts_args_type = "json: string | Uint8Array",
        ts_return_type = "Promise<Tokenizer>"
    )]
    pub fn load_json<'env>(env: &'env Env, json: Unknown<'env>) -> napi::Result<Unknown<'env>> {
        promise(env, || {
            Ok(LoadTask(LoadRequest::Json(owned_file_contents(
                env,
                &json,
                "json",
                JSON_CONTENTS,
            )?)))
        })
    }

    /// Resolves once the tokenizer's fastest engine encodes every text. `fromEncoding` and
    /// `fromModel` return as soon as the rank table is read and encode at once on an engine over
    /// it, while the release-candidate engine (several times faster on large inputs) is built on
    /// a thread of its own; a bulk job awaits this first so that the build does not compete with
    /// its first batches for the same cores. A Hugging Face tokenizer likewise encodes as soon as
    /// the stable `tokenizers` 0.23 engine has read its file, and builds the release candidate on a
    /// thread of its own; this resolves once that build has settled `routing`. The ids are the
    /// same before and after.
    #[napi(catch_unwind, ts_return_type = "Promise<void>")]
    pub fn when_ready<'env>(&self, env: &'env Env) -> napi::Result<Unknown<'env>> {
        promise(env, || Ok(ReadyTask(Arc::clone(&self.tokenizer))))
    }

    /// The named special tokens: a model folder's config files', each unset one from what the
    /// tokenizer.json says (its padding, unknown, classifier and separator tokens). An OpenAI
    /// encoding: `eos` is `<|endoftext|>`, its other named special tokens are `additional`.
    #[napi(getter)]
    pub fn special_tokens(&self) -> SpecialTokens {
        to_js_special_tokens(self.tokenizer.special_tokens())
    }

    /// The longest input the model takes, from `tokenizer_config.json`'s `model_max_length`;
    /// `null` where there is none or it says "no limit" (transformers' `1e30`).
    #[napi(getter)]
    pub fn model_max_length(&self) -> Option<f64> {
        self.tokenizer
            .model_config()
            .and_then(|config| config.model_max_length)
            .map(|length| length as f64)
    }

    /// The model folder's chat templates, by name (a single unnamed template is `default`);
    /// empty where there are none.
    #[napi(getter, ts_return_type = "Record<string, string>")]
    pub fn chat_templates<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        let mut object = Object::new(env)?;
        if let Some(config) = self.tokenizer.model_config() {
            for (name, source) in &config.chat_templates {
                object.set(name, source.as_str())?;
            }
        }
        Ok(object)
    }

    /// The folder or file the tokenizer was loaded from; `null` for an embedded encoding or
    /// `fromJSON`.
    #[napi(getter)]
    pub fn source(&self) -> Option<String> {
        self.tokenizer
            .source()
            .map(Path::display)
            .map(|path| path.to_string())
    }
}

/// Options of `Tokenizer.fromPretrained`.
#[napi(object, object_to_js = false, object_from_js = false)]
#[expect(
    dead_code,
    reason = "index.d.ts's type; `pretrained_request` reads the options by hand"
)]
pub struct PretrainedOptions {
    /// The Hugging Face cache to look for a Hub id in, instead of the one the environment names.
    #[napi(ts_type = "string | URL")]
    pub cache_dir: Option<String>,
    /// A branch, tag or commit hash of a Hub id. @default 'main'
    pub revision: Option<String>,
}
