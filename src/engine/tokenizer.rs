//! A loaded tokenizer: the engines it owns, and the routing of each text to one of them.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::openai::{self, ENCODINGS, OpenAiEncoding};
use super::pipeline::PipelineEngine;
use super::routing::Route;
use super::special::{self, AllowedSpecial, Segment, SpecialToken};
use super::stable::StableEngine;
use super::{Engine, Error, ErrorKind, Ids};

/// Where a tokenizer comes from, which decides the options that apply to it.
#[derive(Debug, Clone, Copy)]
pub enum Family {
    /// An embedded OpenAI encoding (tiktoken semantics).
    OpenAi(&'static OpenAiEncoding),
    /// A Hugging Face tokenizer.json (`tokenizers` semantics).
    HuggingFace,
}

/// How a call encodes, resolved once per call against the tokenizer's family.
#[derive(Debug, Clone, Default)]
pub struct EncodeMode {
    add_special_tokens: bool,
    allowed_special: Vec<SpecialToken>,
}

/// A tokenizer: one or two engines and the route between them.
pub struct Tokenizer {
    family: Family,
    /// The release-candidate engine, where it loaded the file.
    pipeline: Option<PipelineEngine>,
    /// The stable engine: every Hugging Face tokenizer has one (decoding, the vocabulary and the
    /// inputs routed to it); the OpenAI encodings need none.
    stable: Option<StableEngine>,
    route: Route,
    /// `valid_ids[id]`: `decode` accepts `id`.
    valid_ids: Vec<bool>,
}

impl Tokenizer {
    /// An embedded OpenAI encoding by name or alias. Each is built once per process and shared.
    pub fn from_encoding(name: &str) -> Result<Arc<Tokenizer>, Error> {
        static LOADED: [OnceLock<Result<Arc<Tokenizer>, Error>>; 4] =
            [const { OnceLock::new() }; 4];
        let encoding = openai::find(name)?;
        let slot = ENCODINGS
            .iter()
            .position(|e| std::ptr::eq(e, encoding))
            .expect("find returns an entry of ENCODINGS");
        LOADED[slot]
            .get_or_init(|| {
                let loaded = encoding.load()?;
                Ok(Arc::new(Tokenizer {
                    family: Family::OpenAi(encoding),
                    pipeline: Some(loaded.engine),
                    stable: None,
                    route: Route::Pipeline,
                    valid_ids: loaded.valid_ids,
                }))
            })
            .clone()
    }

    /// A Hugging Face tokenizer.json read from `path`.
    pub fn from_file(path: &Path) -> Result<Tokenizer, Error> {
        let json = std::fs::read_to_string(path).map_err(|e| {
            Error::new(
                ErrorKind::Load,
                format!("cannot read tokenizer file '{}': {e}", path.display()),
            )
        })?;
        Self::from_json(&json, &format!("tokenizer file '{}'", path.display()))
    }

    /// A Hugging Face tokenizer.json held in a string; `origin` names it in errors.
    pub fn from_json(json: &str, origin: &str) -> Result<Tokenizer, Error> {
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(json) {
            return Err(Error::new(
                ErrorKind::Load,
                format!("{origin} is not valid JSON: {e}"),
            ));
        }
        let stable = StableEngine::from_json(json).map_err(|e| {
            Error::new(
                ErrorKind::Load,
                format!(
                    "{origin} is not a tokenizer.json that Hugging Face tokenizers can read: {e}"
                ),
            )
        })?;
        let (pipeline, route) = match PipelineEngine::from_json(json) {
            Ok(engine) => {
                let route = Route::for_loaded(&engine, &stable);
                (Some(engine), route)
            }
            Err(why) => (None, Route::stable_because(why)),
        };
        let mut valid_ids = Vec::new();
        for id in stable.vocabulary_ids() {
            let id = id as usize;
            if id >= valid_ids.len() {
                valid_ids.resize(id + 1, false);
            }
            valid_ids[id] = true;
        }
        Ok(Tokenizer {
            family: Family::HuggingFace,
            pipeline,
            stable: Some(stable),
            route,
            valid_ids,
        })
    }

    /// Which family the tokenizer belongs to.
    pub fn family(&self) -> Family {
        self.family
    }

    /// Which engine encodes what, and why, in words.
    pub fn routing(&self) -> String {
        self.route.describe()
    }

    /// One more than the largest id `decode` accepts.
    pub fn vocab_size(&self) -> u32 {
        self.valid_ids.len() as u32
    }

    /// Resolves a call's options against this tokenizer's family.
    ///
    /// `add_special_tokens` applies to Hugging Face tokenizers (default true, as in `tokenizers`);
    /// `allowed_special` to the OpenAI encodings (default none, as tiktoken's `encode_ordinary`).
    pub fn encode_mode(
        &self,
        add_special_tokens: Option<bool>,
        allowed_special: &AllowedSpecial,
    ) -> Result<EncodeMode, Error> {
        match self.family {
            Family::OpenAi(encoding) => {
                if add_special_tokens == Some(true) {
                    return Err(Error::new(
                        ErrorKind::InvalidOption,
                        format!(
                            "addSpecialTokens applies to Hugging Face tokenizers; {} adds no \
                             template tokens. Use allowedSpecial to turn special-token text into ids",
                            encoding.name
                        ),
                    ));
                }
                Ok(EncodeMode {
                    add_special_tokens: false,
                    allowed_special: special::resolve(allowed_special, encoding.specials)?,
                })
            }
            Family::HuggingFace => {
                if *allowed_special != AllowedSpecial::None {
                    return Err(Error::new(
                        ErrorKind::InvalidOption,
                        "allowedSpecial applies to the OpenAI encodings; a Hugging Face tokenizer \
                         always turns its added tokens into ids. Use addSpecialTokens for the \
                         template tokens",
                    ));
                }
                Ok(EncodeMode {
                    add_special_tokens: add_special_tokens.unwrap_or(true),
                    allowed_special: Vec::new(),
                })
            }
        }
    }

    /// Appends the ids of `text` to `out`.
    #[inline]
    pub fn encode_into(&self, text: &str, mode: &EncodeMode, out: &mut Ids) -> Result<(), Error> {
        match self.family {
            Family::OpenAi(_) => {
                let engine = self
                    .pipeline
                    .as_ref()
                    .expect("an OpenAI encoding has its engine");
                special::for_each_segment(text, &mode.allowed_special, |segment| match segment {
                    Segment::Text(text) => engine.encode_into(text, false, false, out),
                    Segment::Special(id) => {
                        out.push(id);
                        Ok(())
                    }
                })
            }
            Family::HuggingFace => {
                self.engine_for(text)
                    .encode_into(text, mode.add_special_tokens, true, out)
            }
        }
    }

    /// The ids of `text`.
    pub fn encode(&self, text: &str, mode: &EncodeMode) -> Result<Ids, Error> {
        let mut ids = Ids::with_capacity(text.len() / 3 + 4);
        self.encode_into(text, mode, &mut ids)?;
        Ok(ids)
    }

    /// Decodes ids to text; an id that is not in the vocabulary is an error naming it and its index.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, Error> {
        if let Some((index, &id)) = ids
            .iter()
            .enumerate()
            .find(|&(_, &id)| !self.valid_ids.get(id as usize).copied().unwrap_or(false))
        {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!(
                    "id {id} at index {index} is not in the vocabulary (ids run from 0 to {})",
                    self.valid_ids.len().saturating_sub(1)
                ),
            ));
        }
        match (self.family, &self.stable, &self.pipeline) {
            (Family::OpenAi(encoding), _, Some(pipeline)) => {
                decode_around_specials(pipeline, encoding.specials, ids, skip_special_tokens)
            }
            (_, Some(stable), _) => stable.decode(ids, skip_special_tokens),
            (_, None, Some(pipeline)) => pipeline.decode(ids, skip_special_tokens),
            (_, None, None) => unreachable!("a tokenizer has at least one engine"),
        }
    }

    /// The engine that encodes `text`.
    #[inline]
    fn engine_for(&self, text: &str) -> &dyn Engine {
        match (&self.pipeline, &self.stable) {
            (Some(pipeline), _) if !self.route.wants_stable(text) => pipeline,
            (_, Some(stable)) => stable,
            (Some(pipeline), None) => pipeline,
            (None, None) => unreachable!("a tokenizer has at least one engine"),
        }
    }
}

/// Decodes ids of an OpenAI encoding, whose special tokens the engine does not know: the runs of
/// ordinary ids are decoded by the engine and the special tokens spelled in between (or left out).
fn decode_around_specials(
    engine: &PipelineEngine,
    specials: &[SpecialToken],
    ids: &[u32],
    skip_special_tokens: bool,
) -> Result<String, Error> {
    let special_text = |id: u32| specials.iter().find(|s| s.id == id).map(|s| s.text);
    if skip_special_tokens {
        let ordinary: Vec<u32> = ids
            .iter()
            .copied()
            .filter(|&id| special_text(id).is_none())
            .collect();
        return engine.decode(&ordinary, false);
    }
    let mut text = String::new();
    for run in ids.split_inclusive(|&id| special_text(id).is_some()) {
        let (last, ordinary) = run
            .split_last()
            .expect("split_inclusive yields no empty run");
        match special_text(*last) {
            Some(special) => {
                text.push_str(&engine.decode(ordinary, false)?);
                text.push_str(special);
            }
            None => text.push_str(&engine.decode(run, false)?),
        }
    }
    Ok(text)
}
