//! A loaded tokenizer: the engines it owns, and the routing of each text to one of them.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::loading::{Engines, ValidIds, VocabularyIds};
use super::long_texts::{self, Cuts};
use super::model_config::{ModelConfig, SpecialTokens};
use super::model_folder::{self, HubOptions, Located, TEKKEN_FILE, TOKENIZER_FILE};
use super::openai::{self, ENCODINGS, OpenAiEncoding, RankModel};
use super::pipeline::PipelineEngine;
use super::ranks::RankTable;
use super::special::{self, AllowedSpecial, Segment, SpecialSet, SpecialToken};
use super::stable::StableEngine;
use super::tekken::{self, TEKKEN_NAME};
use super::tiktoken_file::{self, RankFile};
use super::{Engine, Error, ErrorKind, Ids, Scratch, Side, Truncation, TruncationChoice};

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
    allowed_special: SpecialSet,
    /// Hugging Face tokenizers: encode added special tokens' text as ordinary text (Python
    /// `tokenizers`' `encode_special_tokens = True`).
    special_text_is_ordinary: bool,
    /// OpenAI encodings: special tokens whose text makes a text fail, as tiktoken's
    /// `disallowed_special` refuses it (empty: none, batchtok's default).
    disallowed_special: SpecialSet,
    /// Hugging Face tokenizers: the truncation applied to each text (the file's by default).
    truncation: TruncationChoice,
}

/// The engine a Hugging Face tokenizer's route picks for a text.
enum Chosen<'t> {
    Stable(&'t StableEngine),
    Pipeline(&'t PipelineEngine),
}

impl<'t> Chosen<'t> {
    fn engine(self) -> &'t dyn Engine {
        match self {
            Chosen::Stable(stable) => stable,
            Chosen::Pipeline(pipeline) => pipeline,
        }
    }
}

/// A tokenizer: one or two engines and the route between them.
pub struct Tokenizer {
    family: Family,
    /// A Hugging Face tokenizer's engines (the stable engine, built at load; the release
    /// candidate, built on a thread of its own), its route and vocabulary (`loading.rs`). An
    /// OpenAI encoding's engines belong to its `RankModel`, shared by every tokenizer of it; its
    /// `Engines` holds only its vocabulary.
    engines: Arc<Engines>,
    /// Ids per byte of text in the last batch recorded, in units of 2^-16: what the next batch's
    /// buffers are sized by (see [`Tokenizer::expected_ids`]).
    ids_per_byte: AtomicU32,
    /// The model folder's config files, where the tokenizer was loaded from a folder.
    pub(super) model_config: Option<ModelConfig>,
    /// The file or folder it was loaded from, if any.
    source: Option<PathBuf>,
    /// Where an OpenAI encoding's texts may be cut, outside its special tokens, built on first
    /// use ([`Tokenizer::cuts`]).
    special_token_cuts: OnceLock<Cuts>,
}

/// Whether `have` are the special tokens `want` (text and id), in the same order.
fn same_specials(have: &[SpecialToken], want: &[(String, u32)]) -> bool {
    have.len() == want.len()
        && have
            .iter()
            .zip(want)
            .all(|(have, (text, id))| have.text == text && have.id == *id)
}

/// [`Tokenizer::ids_per_byte`]'s fixed point: 1.0 is `1 << IDS_PER_BYTE_SHIFT`.
const IDS_PER_BYTE_SHIFT: u32 = 16;

/// The ratio assumed before a tokenizer has seen a batch: a quarter of an id per byte, about what
/// the OpenAI encodings give on English prose (o200k_base: 0.23 on big.txt).
const INITIAL_IDS_PER_BYTE: u32 = 1 << (IDS_PER_BYTE_SHIFT - 2);

/// The most ids per byte a buffer is sized for, however many the last batch had: byte-level BPE
/// never gives more than one id per byte, and a larger guess would only reserve memory.
const MAX_IDS_PER_BYTE: u32 = 1 << IDS_PER_BYTE_SHIFT;

impl Tokenizer {
    /// An embedded OpenAI encoding by name or alias. Each is built once per process and shared.
    ///
    /// It is ready once its rank table is read; the release-candidate engine is built meanwhile on
    /// a thread of its own and takes over when it is ready (`openai.rs` says why).
    pub fn from_encoding(name: &str) -> Result<Arc<Tokenizer>, Error> {
        static LOADED: [OnceLock<Result<Arc<Tokenizer>, Error>>; openai::ENCODING_COUNT] =
            [const { OnceLock::new() }; openai::ENCODING_COUNT];
        let encoding = openai::find(name)?;
        let slot = ENCODINGS
            .iter()
            .position(|e| std::ptr::eq(e, encoding))
            .expect("find returns an entry of ENCODINGS");
        LOADED[slot]
            .get_or_init(|| Self::for_encoding(encoding))
            .clone()
    }

    /// An embedded OpenAI encoding with the special tokens `extra` (text and id) added, as
    /// tiktoken's `Encoding(special_tokens={**base, **extra})` adds them: they encode where a
    /// call allows them, decode, and are in the vocabulary. It shares the encoding's engines.
    /// The tokenizer of each distinct set is made once per process and shared (its tokens' text
    /// stays for the process's life); with no tokens besides the encoding's own it is
    /// [`from_encoding`](Self::from_encoding)'s.
    pub fn from_encoding_with(
        name: &str,
        extra: &[(String, u32)],
    ) -> Result<Arc<Tokenizer>, Error> {
        static EXTENDED: Mutex<Vec<Arc<Tokenizer>>> = Mutex::new(Vec::new());
        let base = openai::find(name)?;
        let added = base.check_extra_specials(extra)?;
        if added.is_empty() {
            return Self::from_encoding(name);
        }
        Self::interned(
            &EXTENDED,
            |encoding| {
                encoding.name == base.name && same_specials(encoding.extra_specials(), &added)
            },
            || Ok(base.extended(added.clone())),
        )
    }

    /// An encoding read from a rank file in tiktoken's format (`contents`, see
    /// `tiktoken_file.rs`), named `name`, splitting text with `pattern` and with the special
    /// tokens `specials`, as tiktoken's `Encoding(name, pat_str, mergeable_ranks,
    /// special_tokens)` makes one. Ready once the table is indexed; the release candidate is
    /// built from it on a thread of its own. Each distinct table and pattern is kept for the
    /// process's life, as the embedded encodings are, and made once: the same file again shares
    /// its engines, and the same name and tokens too, its tokenizer.
    pub fn from_rank_file(
        contents: &[u8],
        pattern: &str,
        name: &str,
        specials: &[(String, u32)],
    ) -> Result<Arc<Tokenizer>, Error> {
        let file = tiktoken_file::read_rank_file(contents)
            .map_err(|why| Error::new(ErrorKind::Load, why))?;
        Self::from_ranks("the rank file", file, pattern, name, specials)
    }

    /// Mistral's tokenizer file (`tekken.json`, see `tekken.rs`), as `mistral_common`'s
    /// `Tekkenizer.from_file` reads it, named `name`: its ordinary tokens numbered after its
    /// special tokens, which are special tokens here. Made and kept as
    /// [`from_rank_file`](Self::from_rank_file)'s encodings are.
    pub fn from_tekken(json: &[u8], name: &str) -> Result<Arc<Tokenizer>, Error> {
        let tekken = tekken::read_tekken(json).map_err(|why| Error::new(ErrorKind::Load, why))?;
        Self::from_ranks(
            "the tekken file",
            tekken.ranks,
            &tekken.pattern,
            name,
            &tekken.specials,
        )
    }

    /// The encoding of the ranks `file` (`source`, as errors name it), splitting text with
    /// `pattern`, named `name`, with the special tokens `specials`: one model per distinct table
    /// and pattern, one tokenizer per model, name and special tokens.
    fn from_ranks(
        source: &str,
        file: RankFile,
        pattern: &str,
        name: &str,
        specials: &[(String, u32)],
    ) -> Result<Arc<Tokenizer>, Error> {
        static MODELS: Mutex<Vec<&'static RankModel>> = Mutex::new(Vec::new());
        static TOKENIZERS: Mutex<Vec<Arc<Tokenizer>>> = Mutex::new(Vec::new());
        if name.is_empty() || openai::find(name).is_ok() {
            return Err(Error::new(
                ErrorKind::InvalidOption,
                format!(
                    "options.name is {name:?}; give the encoding a name of its own, not an \
                     embedded encoding's (Tokenizer.fromEncoding loads those)"
                ),
            ));
        }
        let model = {
            let mut models = MODELS
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            match models
                .iter()
                .find(|model| model.is_rank_file(&file, pattern))
            {
                Some(model) => *model,
                None => {
                    let empty_token = file.empty_token;
                    let table = RankTable::new(file.table)
                        .and_then(|table| table.with_empty_token(empty_token))
                        .map_err(|why| {
                            Error::new(
                                ErrorKind::Load,
                                format!("{source} is not a rank table: {why}"),
                            )
                        })?;
                    let name = Box::leak(name.to_owned().into_boxed_str());
                    let model = RankModel::from_rank_file(name, table, pattern)?;
                    models.push(model);
                    model
                }
            }
        };
        let mut in_id_order = specials.to_vec();
        in_id_order.sort_by_key(|(_, id)| *id);
        Self::interned(
            &TOKENIZERS,
            |encoding| {
                std::ptr::eq(encoding.model, model)
                    && encoding.name == name
                    && same_specials(encoding.specials(), &in_id_order)
            },
            || {
                let name = Box::leak(name.to_owned().into_boxed_str());
                OpenAiEncoding::from_rank_file(name, model, specials)
            },
        )
    }

    /// The tokenizer in `registry` whose encoding is `wanted`, or one of the encoding `make`
    /// gives, kept there: each encoding made at run time is made once per process.
    fn interned(
        registry: &Mutex<Vec<Arc<Tokenizer>>>,
        wanted: impl Fn(&OpenAiEncoding) -> bool,
        make: impl FnOnce() -> Result<&'static OpenAiEncoding, Error>,
    ) -> Result<Arc<Tokenizer>, Error> {
        let mut registry = registry
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let found = registry.iter().find(|tokenizer| match tokenizer.family {
            Family::OpenAi(encoding) => wanted(encoding),
            Family::HuggingFace => false,
        });
        if let Some(found) = found {
            return Ok(found.clone());
        }
        let tokenizer = Self::for_encoding(make()?)?;
        registry.push(tokenizer.clone());
        Ok(tokenizer)
    }

    /// A tokenizer of `encoding`: ready once its rank table is read, its release-candidate engine
    /// built in the background.
    fn for_encoding(encoding: &'static OpenAiEncoding) -> Result<Arc<Tokenizer>, Error> {
        encoding.model.first_engine()?;
        let valid_ids = encoding.valid_ids()?;
        encoding.model.build_full_engine_in_background();
        Ok(Arc::new(Tokenizer {
            family: Family::OpenAi(encoding),
            engines: Arc::new(Engines::for_encoding(VocabularyIds {
                size: valid_ids.iter().filter(|&&valid| valid).count(),
                valid: ValidIds::Table(valid_ids),
            })),
            ids_per_byte: AtomicU32::new(INITIAL_IDS_PER_BYTE),
            model_config: None,
            source: None,
            special_token_cuts: OnceLock::new(),
        }))
    }

    /// A Hugging Face tokenizer.json read from `path`.
    ///
    /// Returns once the stable engine is built, and encodes on it while the release candidate is
    /// built on a thread of its own (`loading.rs`; [`wait_until_ready`](Self::wait_until_ready)
    /// waits for it). Takes a fraction of a second for a large vocabulary, so a caller with an
    /// event loop runs it on another thread. `Tokenizer` is `Send + Sync`.
    pub fn from_file(path: &Path) -> Result<Tokenizer, Error> {
        let json = std::fs::read_to_string(path).map_err(|e| {
            Error::new(
                ErrorKind::Load,
                format!("cannot read tokenizer file '{}': {e}", path.display()),
            )
        })?;
        let mut tokenizer = Self::load(json, &format!("tokenizer file '{}'", path.display()))?;
        tokenizer.source = Some(path.to_owned());
        Ok(tokenizer)
    }

    /// A model folder: its tokenizer.json, else its tekken.json (a Mistral model in Mistral's own
    /// format, as `mistral_common` reads it), and what its config files say (`model_config.rs`).
    pub fn from_folder(folder: &Path) -> Result<Tokenizer, Error> {
        let config = ModelConfig::read(folder)?;
        let tokenizer_file = folder.join(TOKENIZER_FILE);
        let mut tokenizer = if tokenizer_file.is_file() {
            Self::from_file(&tokenizer_file)?
        } else {
            Self::from_tekken_file(&folder.join(TEKKEN_FILE))?
        };
        tokenizer.model_config = Some(config);
        tokenizer.source = Some(folder.to_owned());
        Ok(tokenizer)
    }

    /// The tekken.json at `path`: a tokenizer of its own over the encoding
    /// [`from_tekken`](Self::from_tekken) makes (and keeps) of the file, so that it can carry the
    /// folder's config.
    fn from_tekken_file(path: &Path) -> Result<Tokenizer, Error> {
        let json = std::fs::read(path).map_err(|e| {
            Error::new(
                ErrorKind::Load,
                format!("cannot read tekken file '{}': {e}", path.display()),
            )
        })?;
        let shared = Self::from_tekken(&json, TEKKEN_NAME)?;
        Ok(Tokenizer {
            family: shared.family,
            engines: shared.engines.clone(),
            ids_per_byte: AtomicU32::new(INITIAL_IDS_PER_BYTE),
            model_config: None,
            source: None,
            special_token_cuts: OnceLock::new(),
        })
    }

    /// A model folder, a tokenizer.json, or a Hub id in the local Hugging Face cache, as
    /// [`model_folder::locate`] finds it with the process environment; nothing is downloaded.
    ///
    /// Reads files and parses the tokenizer: a caller with an event loop runs it on another thread.
    pub fn from_pretrained(path_or_id: &str, options: &HubOptions) -> Result<Tokenizer, Error> {
        let env = |name: &str| std::env::var_os(name);
        match model_folder::locate(path_or_id, options, &env)? {
            Located::Folder(folder) => Self::from_folder(&folder),
            Located::File(file) => Self::from_file(&file),
        }
    }

    /// A Hugging Face tokenizer.json held in a string; `origin` names it in errors.
    pub fn from_json(json: &str, origin: &str) -> Result<Tokenizer, Error> {
        Self::load(json.to_owned(), origin)
    }

    /// A Hugging Face tokenizer.json held as bytes, as a file or a network response gives them;
    /// `origin` names it in errors. Bytes that are not UTF-8 are a `Load` error saying where.
    pub fn from_json_bytes(json: Vec<u8>, origin: &str) -> Result<Tokenizer, Error> {
        let json = String::from_utf8(json).map_err(|e| {
            Error::new(
                ErrorKind::Load,
                format!(
                    "{origin} is not UTF-8 text ({}); a tokenizer.json is UTF-8",
                    e.utf8_error()
                ),
            )
        })?;
        Self::load(json, origin)
    }

    /// Reads a tokenizer.json: builds the stable engine here and the release candidate on a
    /// thread of its own, and returns once one of them encodes every text (`loading.rs`).
    fn load(json: String, origin: &str) -> Result<Tokenizer, Error> {
        Ok(Tokenizer {
            family: Family::HuggingFace,
            engines: Engines::load(json, origin)?,
            ids_per_byte: AtomicU32::new(INITIAL_IDS_PER_BYTE),
            model_config: None,
            source: None,
            special_token_cuts: OnceLock::new(),
        })
    }

    /// Waits until the tokenizer's fastest engine encodes every text. An OpenAI encoding starts
    /// on an engine over its rank table and builds the release-candidate engine on a thread of its
    /// own; this returns when that build is done (starting it if nothing has). A Hugging Face
    /// tokenizer starts on the stable engine and builds the release candidate on a thread of its
    /// own (`loading.rs`); this returns when that build has settled the route.
    pub fn wait_until_ready(&self) -> Result<(), Error> {
        match self.family {
            Family::OpenAi(encoding) => encoding.model.wait_for_full_engine(),
            Family::HuggingFace => {
                self.engines.wait_until_settled();
                Ok(())
            }
        }
    }

    /// Whether the stable engine has been built (tests and benchmarks).
    #[doc(hidden)]
    pub fn stable_engine_built(&self) -> bool {
        self.engines.stable().is_some()
    }

    /// Whether the release candidate's build has settled the route (tests: a Hugging Face
    /// tokenizer encodes on the stable engine until then).
    #[doc(hidden)]
    pub fn is_ready(&self) -> bool {
        self.engines.settled().is_some()
    }

    /// Which family the tokenizer belongs to.
    pub fn family(&self) -> Family {
        self.family
    }

    /// Which engine encodes what, and why, in words: while the release candidate of a Hugging
    /// Face tokenizer is being built, the stable engine encodes every text, and this says so.
    pub fn routing(&self) -> String {
        if let Family::OpenAi(encoding) = self.family {
            return encoding.model.routing();
        }
        match self.engines.settled() {
            Some(settled) => settled.describe(),
            None => {
                "stable: tokenizers 0.23 encodes every text while the 1.0 release candidate is \
                     built on a thread of its own; whenReady() waits for it, and the route then \
                     settles"
                    .to_owned()
            }
        }
    }

    /// What the model folder's config files say, where the tokenizer was loaded from a folder
    /// ([`from_folder`](Self::from_folder), [`from_pretrained`](Self::from_pretrained)).
    pub fn model_config(&self) -> Option<&ModelConfig> {
        self.model_config.as_ref()
    }

    /// The file or folder the tokenizer was loaded from; `None` for an embedded encoding or a
    /// tokenizer read from a string.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// One more than the largest id `decode` accepts (every id is below it), saturated at
    /// `u32::MAX`: a vocabulary whose largest id is 4294967295 reports 4294967295, one short, since
    /// the bound does not fit a `u32`. Where ids have gaps this is more than
    /// [`vocabulary_size`](Self::vocabulary_size); for an OpenAI encoding it is tiktoken's `n_vocab`.
    pub fn id_limit(&self) -> u32 {
        self.engines
            .vocabulary()
            .valid
            .largest()
            .map_or(0, |largest| largest.saturating_add(1))
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
                let allowed_special = match allowed_special {
                    AllowedSpecial::All => encoding.special_set(),
                    _ => SpecialSet::new(special::resolve(allowed_special, encoding.specials())?),
                };
                Ok(EncodeMode {
                    add_special_tokens: false,
                    allowed_special,
                    special_text_is_ordinary: false,
                    disallowed_special: SpecialSet::default(),
                    truncation: TruncationChoice::File,
                })
            }
            Family::HuggingFace => {
                if *allowed_special != AllowedSpecial::None {
                    return Err(Error::new(
                        ErrorKind::InvalidOption,
                        "allowedSpecial applies to the OpenAI encodings; a Hugging Face tokenizer \
                         turns its added tokens into ids (encodeSpecialTokens: true encodes their \
                         text as ordinary text). Use addSpecialTokens for the template tokens",
                    ));
                }
                Ok(EncodeMode {
                    add_special_tokens: add_special_tokens.unwrap_or(true),
                    allowed_special: SpecialSet::default(),
                    special_text_is_ordinary: false,
                    disallowed_special: SpecialSet::default(),
                    truncation: TruncationChoice::File,
                })
            }
        }
    }

    /// Appends the ids of `text` to `out`, with the working memory and lock count of `scratch`.
    #[inline]
    pub fn encode_into<'t>(
        &'t self,
        text: &str,
        mode: &EncodeMode,
        scratch: &mut Scratch<'t>,
        out: &mut Ids,
    ) -> Result<(), Error> {
        if !mode.disallowed_special.is_empty() {
            special::refuse_disallowed(text, &mode.disallowed_special)?;
        }
        match self.family {
            Family::OpenAi(encoding) => self.encode_openai(encoding, text, mode, scratch, out),
            Family::HuggingFace => {
                let (add, split) = (mode.add_special_tokens, !mode.special_text_is_ordinary);
                // A long text of a file that is cut, a part at a time without template tokens,
                // between the ids the template puts around a text (`long_texts.rs`): such a file
                // truncates nothing, so its own truncation and none are the same.
                let untruncated = !matches!(mode.truncation, TruncationChoice::With(_));
                if untruncated
                    && text.len() > long_texts::PART_BYTES
                    && let Some(stable) = self.stable_engine()
                    && let Some(cuts) = stable.cuts(false)
                    && let Some(ends) = stable.template_ends(add)
                {
                    out.extend_from_slice(&ends.before);
                    cuts.parts(text, long_texts::PART_BYTES)
                        .try_for_each(|part| {
                            self.engine_for(part)
                                .encode_into(part, false, split, scratch, out)
                        })?;
                    out.extend_from_slice(&ends.after);
                    return Ok(());
                }
                let truncation = self.truncation_of(mode);
                let text = self
                    .start_kept_by_truncation(text, truncation.as_ref(), split, scratch)?
                    .unwrap_or(text);
                // A text not cut waits for the release candidate's build past a size, rather than
                // go whole to the stable engine only because the build is not done.
                self.wait_before_long_text(text.len());
                let engine = self.engine_for(text);
                match &mode.truncation {
                    TruncationChoice::File => engine.encode_into(text, add, split, scratch, out),
                    TruncationChoice::Off => {
                        engine.encode_truncated(text, add, split, None, scratch, out)
                    }
                    TruncationChoice::With(truncation) => {
                        engine.encode_truncated(text, add, split, Some(truncation), scratch, out)
                    }
                }
            }
        }
    }

    /// The start of `text` that encodes, under `truncation`, to the whole text's ids, where the
    /// truncation keeps a long text's first ids: the part before a cut
    /// ([`StableEngine::cuts_before_truncation`]: its ids untruncated are the whole's first ones)
    /// with at least as many ids as the truncation keeps, template tokens included. The
    /// truncation then keeps the same ids of either (and the same tokens, offsets and word ids),
    /// and the template and padding go around the same. `None` where the whole text is encoded.
    pub(crate) fn start_kept_by_truncation<'t, 's>(
        &'t self,
        text: &'s str,
        truncation: Option<&Truncation>,
        split_special: bool,
        scratch: &mut Scratch<'t>,
    ) -> Result<Option<&'s str>, Error> {
        let Some((cuts, max_length)) = self
            .cuts_kept_by_truncation(truncation)
            .filter(|_| text.len() > long_texts::PART_BYTES)
        else {
            return Ok(None);
        };
        self.first_start_with_ids(max_length, split_special, scratch, |size| {
            cuts.parts(text, size)
                .next()
                .filter(|start| start.len() < text.len())
        })
    }

    /// The length of the start of `bytes`, the UTF-8 start of one text whose rest may not be read
    /// yet, whose ids under the file's truncation are the whole text's, whatever follows: a start
    /// as [`start_kept_by_truncation`](Self::start_kept_by_truncation) finds one, before a cut
    /// found as [`last_safe_cut`](Self::last_safe_cut) finds one (from the characters beside it),
    /// so that a reader holds no more of a long text than that start. `None` where the file's
    /// truncation does not keep a text's first ids, the file is not cut, or `bytes` holds no such
    /// start (too few ids yet, or bytes that are not UTF-8 before it). Special tokens' text is
    /// read as those tokens, as the readers that ask encode it.
    pub fn kept_by_file_truncation(&self, bytes: &[u8]) -> Result<Option<usize>, Error> {
        let truncation = self.file_truncation();
        let Some((cuts, max_length)) = self.cuts_kept_by_truncation(truncation.as_ref()) else {
            return Ok(None);
        };
        let mut scratch = Scratch::new();
        let start = self.first_start_with_ids(max_length, true, &mut scratch, |size| {
            // The last place between `size` and twice it, read as in a text still being read;
            // where there is none, between twice and four times, and so on.
            let mut from = size;
            while from < bytes.len() {
                let to = bytes.len().min(from.saturating_mul(2));
                if let Some(end) = cuts.last_from(&bytes[..to], from) {
                    return std::str::from_utf8(&bytes[..end]).ok();
                }
                from = to;
            }
            None
        })?;
        Ok(start.map(str::len))
    }

    /// Where a truncation keeps a text's first ids (its direction is right) and the file is cut
    /// before truncation: the cuts and how many ids the truncation keeps.
    fn cuts_kept_by_truncation(&self, truncation: Option<&Truncation>) -> Option<(&Cuts, usize)> {
        let truncation = truncation.filter(|truncation| truncation.direction == Side::Right)?;
        let cuts = self
            .stable_engine()
            .and_then(StableEngine::cuts_before_truncation)?;
        Some((cuts, truncation.max_length))
    }

    /// The first start of a text that `start_at(size)` gives, for growing sizes, with at least
    /// `max_length` ids, without template tokens and untruncated; `None` once it gives none.
    fn first_start_with_ids<'t, 's>(
        &'t self,
        max_length: usize,
        split_special: bool,
        scratch: &mut Scratch<'t>,
        mut start_at: impl FnMut(usize) -> Option<&'s str>,
    ) -> Result<Option<&'s str>, Error> {
        // A few bytes a token, so most texts need one try.
        let mut size = max_length.saturating_mul(16).max(4096);
        loop {
            let Some(start) = start_at(size) else {
                return Ok(None);
            };
            let mut ids = Ids::with_capacity(0);
            self.engine_for(start).encode_truncated(
                start,
                false,
                split_special,
                None,
                scratch,
                &mut ids,
            )?;
            if ids.len() >= max_length {
                return Ok(Some(start));
            }
            size = start.len().saturating_mul(2);
        }
    }

    /// [`encode_into`](Self::encode_into) for an OpenAI-style encoding, with each stretch of
    /// ordinary text longer than [`long_texts::PART_BYTES`] encoded a part at a time where the
    /// pattern allows.
    fn encode_openai<'t>(
        &'t self,
        encoding: &'static OpenAiEncoding,
        text: &str,
        mode: &EncodeMode,
        scratch: &mut Scratch<'t>,
        out: &mut Ids,
    ) -> Result<(), Error> {
        // fastokens, where built, reads every character as tiktoken does. Otherwise a text with
        // characters the fast path reads differently from tiktoken goes, whole, to the exact path
        // (see `unicode_drift.rs`).
        let model = encoding.model;
        let engine: &dyn Engine = if let Some(fastokens) = model.fastokens_if_ready(text) {
            fastokens
        } else if model.wants_exact(text) {
            model.exact_engine()?
        } else if let Some(full) = model.full_engine_if_ready() {
            full
        } else {
            model.first_engine()?
        };
        // The segments hold no special token: every word gap is a cut.
        let part_bytes = if model.cuts_at_word_gaps() {
            long_texts::PART_BYTES
        } else {
            usize::MAX
        };
        special::for_each_segment(text, &mode.allowed_special, |segment| match segment {
            Segment::Text(text) => Cuts::EVERY_WORD_GAP
                .parts(text, part_bytes)
                .try_for_each(|part| engine.encode_into(part, false, false, scratch, out)),
            Segment::Special(id) => {
                out.push(id);
                Ok(())
            }
        })
    }

    /// About how many ids `bytes` of text give, judging by the last batch recorded with
    /// [`record_batch`](Self::record_batch): a buffer of this size rarely grows, and growing one
    /// copies it and touches fresh memory.
    pub fn expected_ids(&self, bytes: usize) -> usize {
        let ratio = u64::from(self.ids_per_byte.load(Ordering::Relaxed));
        ((bytes as u64 * ratio) >> IDS_PER_BYTE_SHIFT) as usize
    }

    /// Records that a batch of `bytes` of text gave `ids` ids, for [`expected_ids`](Self::expected_ids).
    /// Concurrent batches may overwrite each other's figure; either is a fair guess.
    pub fn record_batch(&self, bytes: usize, ids: usize) {
        if bytes == 0 {
            return;
        }
        let ratio = ((ids as u128) << IDS_PER_BYTE_SHIFT) / bytes as u128;
        // A little above what was seen, so the same texts again fit without growing.
        let padded = ratio + ratio / 16 + 1;
        self.ids_per_byte.store(
            padded.min(u128::from(MAX_IDS_PER_BYTE)) as u32,
            Ordering::Relaxed,
        );
    }

    /// The ids of `text`, encoded on its own.
    pub fn encode(&self, text: &str, mode: &EncodeMode) -> Result<Ids, Error> {
        let mut ids = Ids::with_capacity(text.len() / 3 + 4);
        self.encode_into(text, mode, &mut Scratch::new(), &mut ids)?;
        Ok(ids)
    }

    /// The last place at or after `from` where `bytes`, the start of one text whose rest may not
    /// be read yet, can be cut so that the ids of the bytes before it, then those of the text
    /// from it, are the ids of the whole text, in every encode mode but a truncation, with
    /// template tokens or, where not `with_template_tokens`, without: a word gap outside every
    /// special or added token (`long_texts.rs`). `None` where `bytes` has none from `from`, and
    /// always for a tokenizer whose texts are not cut: a pattern of the user's own, or a
    /// tokenizer.json whose pre-tokenizer is not one of the patterns cut or whose truncation,
    /// added tokens or (with them) template tokens read across the cut
    /// (`StableEngine::cuts`). A file whose part from a cut is encoded without the space it
    /// begins at ([`left_out_after_cut`](Self::left_out_after_cut): Llama 2's shape) is cut only
    /// `for_parts_after_cut`, where the caller encodes that part so.
    pub fn last_safe_cut(
        &self,
        bytes: &[u8],
        from: usize,
        with_template_tokens: bool,
        for_parts_after_cut: bool,
    ) -> Option<usize> {
        let cuts = self.cuts(with_template_tokens)?;
        if cuts.leaves_out_space_at_cut() && !for_parts_after_cut {
            return None;
        }
        cuts.last_from(bytes, from)
    }

    /// How many bytes at the start of `part`, the text from a
    /// [`last_safe_cut`](Self::last_safe_cut) on, are left out of what is encoded for it, so that
    /// its ids follow those of the text before the cut: the space it begins at under a file that
    /// puts a `▁` before each text (`long_texts.rs`), else none.
    pub fn left_out_after_cut(&self, part: &[u8]) -> usize {
        self.cuts(false)
            .map_or(0, |cuts| cuts.left_out_after_cut(part))
    }

    /// Where this tokenizer's texts may be cut ([`last_safe_cut`](Self::last_safe_cut)).
    pub(crate) fn cuts(&self, with_template_tokens: bool) -> Option<&Cuts> {
        match self.family {
            Family::OpenAi(encoding) => encoding.model.cuts_at_word_gaps().then(|| {
                self.special_token_cuts.get_or_init(|| {
                    Cuts::outside(encoding.specials().iter().map(|special| special.text))
                })
            }),
            Family::HuggingFace => self
                .stable_engine()
                .and_then(|stable| stable.cuts(with_template_tokens)),
        }
    }

    /// Decodes ids to text; an id that is not in the vocabulary is an error naming it and its index.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, Error> {
        self.check_ids(ids)?;
        match (self.family, self.stable_engine(), self.pipeline_engine()) {
            (Family::OpenAi(encoding), _, _) => decode_around_specials(
                encoding.model.first_engine()?,
                |id| encoding.special_text(id),
                ids,
                skip_special_tokens,
            ),
            (_, Some(stable), _) => stable.decode(ids, skip_special_tokens),
            (_, None, Some(pipeline)) => pipeline.decode(ids, skip_special_tokens),
            (_, None, None) => unreachable!("a tokenizer has at least one engine"),
        }
    }

    /// An error naming the first id of `ids` that is not in the vocabulary, and its index.
    pub(super) fn check_ids(&self, ids: &[u32]) -> Result<(), Error> {
        let valid = &self.engines.vocabulary().valid;
        if let Some((index, &id)) = ids.iter().enumerate().find(|&(_, &id)| !valid.contains(id)) {
            let range = match valid.largest() {
                Some(largest) => format!("ids run from 0 to {largest}"),
                None => "the vocabulary is empty".to_owned(),
            };
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!("id {id} at index {index} is not in the vocabulary ({range})"),
            ));
        }
        Ok(())
    }

    /// The engine that encodes ordinary text once the tokenizer is ready, to measure it alone
    /// (benchmarks); waits for the build.
    #[doc(hidden)]
    pub fn main_engine(&self) -> &dyn Engine {
        match self.family {
            Family::OpenAi(encoding) => encoding
                .model
                .full_engine()
                .expect("the encoding's engine builds, as its tests check"),
            Family::HuggingFace => {
                self.engines.wait_until_settled();
                self.engine_for("")
            }
        }
    }

    /// The stable engine, to measure it alone (benchmarks); `None` for an OpenAI encoding.
    #[doc(hidden)]
    pub fn fallback_engine(&self) -> Option<&dyn Engine> {
        self.stable_engine().map(|stable| stable as &dyn Engine)
    }

    /// The engine that encodes `text`: the stable engine until the release candidate is built,
    /// then the route's choice.
    #[inline]
    fn engine_for(&self, text: &str) -> &dyn Engine {
        self.choose_engine(text).engine()
    }

    /// [`engine_for`](Self::engine_for), saying which engine it is.
    #[inline]
    fn choose_engine(&self, text: &str) -> Chosen<'_> {
        let settled = self.engines.settled();
        if let Some(settled) = settled
            && let Some(pipeline) = &settled.pipeline
            && !settled.wants_stable(text)
        {
            return Chosen::Pipeline(pipeline);
        }
        match (
            self.engines.stable(),
            settled.and_then(|s| s.pipeline.as_ref()),
        ) {
            (Some(stable), _) => Chosen::Stable(stable),
            // Where the stable crate refused the file, the load waited for the release
            // candidate, which read it: an answer rather than an error.
            (None, Some(pipeline)) => Chosen::Pipeline(pipeline),
            (None, None) => unreachable!("a loaded tokenizer has at least one engine"),
        }
    }
}

/// What the engine's other modules (counting within a budget, decoding to bytes or in a stream,
/// chat) read of a tokenizer.
impl Tokenizer {
    /// The release-candidate engine, where the tokenizer has one and it is built (until then,
    /// the stable engine answers for the file).
    pub(super) fn pipeline_engine(&self) -> Option<&PipelineEngine> {
        self.engines.settled()?.pipeline.as_ref()
    }

    /// The release-candidate engine, where the tokenizer has one, waiting for its build: for what
    /// only it answers (the byte-level bytes of `decode_bytes`), so that an answer never depends
    /// on how far the build has come.
    pub(super) fn built_pipeline_engine(&self) -> Option<&PipelineEngine> {
        self.engines.wait_until_settled().pipeline.as_ref()
    }

    /// The stable engine, where the tokenizer has one (every Hugging Face tokenizer whose file the
    /// stable crate reads).
    pub(super) fn stable_engine(&self) -> Option<&StableEngine> {
        self.engines.stable()
    }

    /// What the tokenizer.json itself says of its special tokens.
    pub(super) fn file_special_tokens(&self) -> &SpecialTokens {
        self.engines.file_special_tokens()
    }

    /// The number of tokens, as [`vocabulary_size`](Self::vocabulary_size) reports it.
    pub(super) fn stored_vocabulary_size(&self) -> usize {
        self.engines.vocabulary_size()
    }

    /// Whether `text` goes to the stable engine (see `routing.rs`): every text until the release
    /// candidate is built.
    #[inline]
    pub(super) fn wants_stable(&self, text: &str) -> bool {
        match self.engines.settled() {
            Some(settled) => settled.pipeline.is_none() || settled.wants_stable(text),
            None => true,
        }
    }
}

impl EncodeMode {
    /// The special tokens whose text becomes their id (OpenAI encodings).
    pub(super) fn allowed_special(&self) -> &[SpecialToken] {
        self.allowed_special.tokens()
    }

    /// The same tokens, as the set that finds them in a text.
    pub(super) fn allowed_special_set(&self) -> &SpecialSet {
        &self.allowed_special
    }

    /// Whether the post-processor's template tokens are added (Hugging Face tokenizers).
    pub fn adds_special_tokens(&self) -> bool {
        self.add_special_tokens
    }

    /// Whether added special tokens' text becomes their ids (Hugging Face tokenizers).
    pub fn splits_special(&self) -> bool {
        !self.special_text_is_ordinary
    }

    /// The truncation applied to each text (Hugging Face tokenizers).
    pub fn truncation(&self) -> &TruncationChoice {
        &self.truncation
    }

    /// This mode with added special tokens' text encoded as ordinary text, as Python
    /// `tokenizers` does with `encode_special_tokens = True` (Hugging Face tokenizers; the OpenAI
    /// encodings do that already for every special token that is not allowed).
    pub fn with_special_text_as_ordinary(mut self, ordinary: bool) -> Self {
        self.special_text_is_ordinary = ordinary;
        self
    }

    /// Whether this mode refuses texts that hold some special token (`disallowedSpecial`).
    pub fn refuses_special(&self) -> bool {
        !self.disallowed_special.is_empty()
    }

    /// The special tokens whose text makes a text fail.
    pub(super) fn disallowed_special(&self) -> &SpecialSet {
        &self.disallowed_special
    }

    /// This mode with `truncation` (from [`Tokenizer::resolve_truncation`]).
    pub fn with_truncation(mut self, truncation: TruncationChoice) -> Self {
        self.truncation = truncation;
        self
    }

    /// This mode refusing every text that contains one of `disallowed` (from
    /// [`Tokenizer::disallowed_special`]), as tiktoken's `encode` does.
    pub fn with_disallowed_special(mut self, disallowed: SpecialSet) -> Self {
        self.disallowed_special = disallowed;
        self
    }
}

/// Decodes ids of an OpenAI encoding, whose special tokens the engine does not know: the runs of
/// ordinary ids are decoded by the engine and the special tokens spelled in between (or left out).
fn decode_around_specials(
    engine: &dyn Engine,
    special_text: impl Fn(u32) -> Option<&'static str>,
    ids: &[u32],
    skip_special_tokens: bool,
) -> Result<String, Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A WordLevel tokenizer.json with `vocab` and `added` (JSON arrays of added tokens).
    fn word_level(vocab: &str, added: &str) -> String {
        format!(
            r#"{{"version":"1.0","truncation":null,"padding":null,"added_tokens":{added},
            "normalizer":null,"pre_tokenizer":{{"type":"Whitespace"}},"post_processor":null,
            "decoder":null,"model":{{"type":"WordLevel","vocab":{vocab},"unk_token":"[UNK]"}}}}"#
        )
    }

    #[test]
    fn ids_near_2_pow_32_cost_memory_by_count_not_value() {
        let json = word_level(r#"{"[UNK]":0,"a":1,"b":4000000000}"#, "[]");
        let tokenizer = Tokenizer::from_json(&json, "test").unwrap();
        let valid = &tokenizer.engines.vocabulary().valid;
        assert!(matches!(valid, ValidIds::Sorted(ids) if ids.len() == 3));
        assert_eq!(tokenizer.id_limit(), 4_000_000_001);
        let mode = tokenizer
            .encode_mode(Some(false), &AllowedSpecial::None)
            .unwrap();
        assert_eq!(
            tokenizer.encode("a b c", &mode).unwrap().as_slice(),
            [1, 4_000_000_000, 0]
        );
        assert_eq!(tokenizer.decode(&[4_000_000_000], false).unwrap(), "b");
        let error = tokenizer.decode(&[1, 2], false).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::OutOfRange);
        assert!(
            error
                .message()
                .contains("id 2 at index 1 is not in the vocabulary")
        );
    }

    #[test]
    fn the_size_of_a_vocabulary_ending_at_u32_max_saturates() {
        let json = word_level(r#"{"[UNK]":0,"b":4294967295}"#, "[]");
        let tokenizer = Tokenizer::from_json(&json, "test").unwrap();
        assert_eq!(tokenizer.id_limit(), u32::MAX);
        assert_eq!(tokenizer.decode(&[u32::MAX], false).unwrap(), "b");
    }

    /// Where the release candidate numbers the added tokens as the file declares them, the
    /// routing trusts that the stable crate does too (`Route::for_pipeline`): tried on added tokens
    /// in and out of the vocabulary, declared at the vocabulary's end, past it with gaps, on ids
    /// the vocabulary uses, twice, or on one id for two tokens.
    #[test]
    fn added_tokens_numbered_as_declared_are_numbered_alike() {
        let mut seed = 0x5EED_4444_u64;
        let mut below = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let (mut trusted, mut compared) = (0, 0);
        for _ in 0..400 {
            let words = ["[UNK]", "a", "b", "c", "d", "e"];
            let vocab: Vec<String> = words
                .iter()
                .enumerate()
                .map(|(id, word)| format!("\"{word}\":{id}"))
                .collect();
            let mut added = Vec::new();
            let mut next = words.len() as u64;
            for n in 0..below(5) {
                let in_vocab = below(4) == 0;
                let content = if in_vocab {
                    words[1 + below(5) as usize].to_owned()
                } else {
                    format!("<t{}>", below(4))
                };
                let id = match below(6) {
                    0 => below(words.len() as u64),
                    1 => next + below(3),
                    2 if n > 0 => next - 1,
                    _ => next,
                };
                next = next.max(id + 1);
                added.push(format!(
                    r#"{{"id":{id},"content":"{content}","single_word":false,"lstrip":false,
                    "rstrip":false,"normalized":{},"special":{}}}"#,
                    below(2) == 0,
                    below(2) == 0
                ));
            }
            let json = word_level(
                &format!("{{{}}}", vocab.join(",")),
                &format!("[{}]", added.join(",")),
            );
            let Ok(tokenizer) = Tokenizer::from_json(&json, "test") else {
                continue;
            };
            let stable = StableEngine::from_json(&json).unwrap();
            let settled = tokenizer.engines.wait_until_settled();
            let pipeline = settled
                .pipeline
                .as_ref()
                .expect("the release candidate reads it");
            // The size counted from the file at load is the stable crate's count.
            assert_eq!(
                tokenizer.vocabulary_size(),
                stable.vocabulary_size(),
                "{json}"
            );
            if settled.trusts_outline {
                trusted += 1;
                assert_eq!(pipeline.added_tokens(), stable.added_tokens(), "{json}");
            } else {
                compared += 1;
            }
        }
        eprintln!("{trusted} numberings trusted, {compared} compared with the stable engine");
        assert!(trusted > 50 && compared > 50, "{trusted} {compared}");
    }

    /// The napi layer loads on a worker thread and shares a tokenizer between threads.
    #[test]
    fn a_tokenizer_and_its_loaders_results_cross_threads() {
        fn send_sync<T: Send + Sync + 'static>() {}
        send_sync::<Tokenizer>();
        send_sync::<Result<Tokenizer, Error>>();
        let json = word_level(r#"{"[UNK]":0,"a":1}"#, "[]");
        let loaded = std::thread::spawn(move || Tokenizer::from_json(&json, "test"))
            .join()
            .unwrap()
            .unwrap();
        let mode = loaded
            .encode_mode(Some(false), &AllowedSpecial::None)
            .unwrap();
        assert_eq!(loaded.encode("a", &mode).unwrap().as_slice(), [1]);
    }

    #[test]
    fn dense_ids_keep_the_table() {
        let ids = ValidIds::from_ids(vec![3, 0, 1, 1, 2, 5]);
        assert!(matches!(ids, ValidIds::Table(_)));
        assert_eq!(ids.largest(), Some(5));
        assert!(ids.contains(5) && !ids.contains(4) && !ids.contains(u32::MAX));
        assert_eq!(ValidIds::from_ids(Vec::new()).largest(), None);
    }

    #[test]
    fn a_bpe_vocabulary_with_an_id_near_u32_max_loads_on_the_stable_engine() {
        // The parse fuzz's finding: the release candidate allocated 16 GiB for this file.
        let mut vocab = serde_json::Map::new();
        for (id, token) in ["a", "b", "ab"].iter().enumerate() {
            vocab.insert((*token).to_owned(), serde_json::json!(id));
        }
        vocab.insert("abab".to_owned(), serde_json::json!(u32::MAX));
        let json = serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": null, "pre_tokenizer": null, "post_processor": null, "decoder": null,
            "model": {"type": "BPE", "vocab": vocab, "merges": ["a b", "ab ab"]},
        })
        .to_string();
        let tokenizer = Tokenizer::from_json(&json, "the test file").unwrap();
        tokenizer.wait_until_ready().unwrap();
        assert!(
            tokenizer.routing().contains("largest id is 4294967295"),
            "{}",
            tokenizer.routing()
        );
        let mode = tokenizer.encode_mode(None, &AllowedSpecial::None).unwrap();
        assert_eq!(
            tokenizer.encode("ababa", &mode).unwrap().as_slice(),
            [u32::MAX, 0]
        );
    }

    /// A text the route sends to the stable engine goes to it in parts of `PART_BYTES` where the
    /// file is cut (its working memory is some 200 times a text), and gives the ids the stable
    /// engine gives the whole, template tokens included; the parts without the character that
    /// sends it there go to the release candidate.
    #[test]
    fn a_long_text_for_the_stable_engine_goes_to_it_in_small_parts() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("__test__/fixtures/tokenizers/gpt2.json");
        let gpt2 = std::fs::read_to_string(&path).unwrap();
        a_long_text_goes_to_the_stable_engine_in_small_parts(&gpt2);
        // A template that puts an id before the text and one after, as BERT's does.
        let mut file: serde_json::Value = serde_json::from_str(&gpt2).unwrap();
        file["post_processor"] = serde_json::json!({
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [50256],
                                                 "tokens": ["<|endoftext|>"]}},
        });
        a_long_text_goes_to_the_stable_engine_in_small_parts(&file.to_string());
    }

    fn a_long_text_goes_to_the_stable_engine_in_small_parts(file: &str) {
        use super::super::stable::LONGEST_TEXT;
        use long_texts::PART_BYTES;
        let tokenizer = Tokenizer::from_json(file, "gpt2").unwrap();
        tokenizer.wait_until_ready().unwrap();
        let mode = tokenizer
            .encode_mode(Some(true), &AllowedSpecial::None)
            .unwrap();
        let stable = tokenizer.stable_engine().unwrap();
        let cuts = stable.cuts(false).unwrap();
        let prose = "The quick brown fox, 42 times: jumps over the lazy dog's back.\n";
        for size in [PART_BYTES + 1, 3 * PART_BYTES + 7] {
            let mut text = prose.repeat(size / prose.len() + 1);
            text.truncate(size);
            // A character Unicode 17 assigns and 16 does not: the route sends its text (its part)
            // to the stable engine.
            text.insert(size / 3, '\u{88f}');
            assert!(matches!(tokenizer.choose_engine(&text), Chosen::Stable(_)));
            assert!(cuts.parts(&text, PART_BYTES).count() > 1);
            let (mut scratch, mut whole) = (Scratch::new(), Ids::with_capacity(0));
            stable
                .encode_into(&text, true, true, &mut scratch, &mut whole)
                .unwrap();
            LONGEST_TEXT.with(|longest| longest.set(0));
            assert!(
                tokenizer.encode(&text, &mode).unwrap().as_slice() == whole.as_slice(),
                "{size} bytes"
            );
            // A part ends at the first word gap after its size.
            let longest = LONGEST_TEXT.with(|longest| longest.get());
            assert!(
                (1..PART_BYTES + prose.len()).contains(&longest),
                "{size} bytes: a part of {longest}"
            );
        }
    }

    /// A text over `LONG_TEXT_WAIT_BYTES` that a file cannot cut waits for the release
    /// candidate's build rather than go to the stable engine whole: BERT's fixture, whose
    /// truncation reads across every cut, its text encoded untruncated (truncated, only its start
    /// would be).
    #[test]
    fn a_long_text_that_is_not_cut_waits_for_the_release_candidate() {
        use super::super::stable::LONGEST_TEXT;
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("__test__/fixtures/tokenizers/bert.json");
        let prose = "The quick brown fox, 42 times: jumps over the lazy dog's back.\n";
        let text = prose.repeat(super::super::engine_wait::LONG_TEXT_WAIT_BYTES / prose.len() + 2);
        for _ in 0..3 {
            let tokenizer = Tokenizer::from_file(&path).unwrap();
            assert!(tokenizer.stable_engine().unwrap().cuts(true).is_none());
            let mode = tokenizer
                .encode_mode(Some(true), &AllowedSpecial::None)
                .unwrap()
                .with_truncation(TruncationChoice::Off);
            LONGEST_TEXT.with(|longest| longest.set(0));
            let ids = tokenizer.encode(&text, &mode).unwrap();
            assert!(tokenizer.is_ready());
            assert!(matches!(
                tokenizer.choose_engine(&text),
                Chosen::Pipeline(_)
            ));
            assert_eq!(LONGEST_TEXT.with(|longest| longest.get()), 0);
            let (mut scratch, mut whole) = (Scratch::new(), Ids::with_capacity(0));
            tokenizer
                .stable_engine()
                .unwrap()
                .encode_truncated(&text, true, true, None, &mut scratch, &mut whole)
                .unwrap();
            assert!(ids.as_slice() == whole.as_slice());
        }
    }

    #[test]
    fn a_token_too_long_for_the_release_candidate_goes_to_the_stable_engine() {
        let long = "x".repeat(super::super::loading::PIPELINE_MAX_TOKEN_BYTES + 1);
        let added = format!(
            r#"[{{"id":2,"content":"{long}","single_word":false,"lstrip":false,"rstrip":false,
            "normalized":false,"special":true}}]"#
        );
        let tokenizer =
            Tokenizer::from_json(&word_level(r#"{"[UNK]":0,"a":1}"#, &added), "test").unwrap();
        tokenizer.wait_until_ready().unwrap();
        assert!(tokenizer.pipeline_engine().is_none());
        assert!(
            tokenizer.routing().contains("bytes long"),
            "{}",
            tokenizer.routing()
        );
        let mode = tokenizer
            .encode_mode(Some(false), &AllowedSpecial::None)
            .unwrap();
        let text = format!("a {long} a");
        assert_eq!(
            tokenizer.encode(&text, &mode).unwrap().as_slice(),
            [1, 2, 1]
        );
    }
}
