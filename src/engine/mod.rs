//! Tokenizer engines, behind one small trait, and the tokenizer that routes text between them.
//!
//! Nothing here knows of napi or of the scheduler. Two engines implement [`Engine`]:
//!
//! - [`pipeline::PipelineEngine`]: Hugging Face `tokenizers` 1.0.0-rc.3's `PipelineTokenizer`, the
//!   fastest engine measured here, used wherever it agrees with the reference.
//! - [`stable::StableEngine`]: the stable `tokenizers` 0.23 crate, the code the Python reference runs,
//!   used where the release candidate cannot load a file or differs from it.
//!
//! [`Tokenizer`] owns one or both and decides, per tokenizer and per input, which one encodes
//! (see `routing.rs` for what is routed where and why). The OpenAI encodings are built from rank
//! tables embedded in the binary (`openai.rs`), and a user's from a rank file in tiktoken's format
//! (`tiktoken_file.rs`) or from Mistral's `tekken.json` (`tekken.rs`); a long text of theirs is
//! encoded a part at a time (`long_texts.rs`).
//!
//! Around encoding and decoding, each in its own file as `impl Tokenizer` blocks: model names and
//! their encodings (`models.rs`), counting within a limit and truncating to a number of tokens
//! (`budget.rs`), exact bytes (`decode_bytes.rs`), transformers' clean-up of decoded text
//! (`tokenization_spaces.rs`), streaming decoding (`stream_decode.rs`),
//! tiktoken's disallowed special tokens (`disallowed.rs`), tiktoken's ids of a text whose end may
//! still grow (`unstable.rs`), chat conversations (`chat.rs`), chat
//! completion requests with function definitions (`function_calls.rs`), the vocabulary
//! (`vocabulary.rs`) and tokens added to it (`add_tokens.rs`). A model folder's config files are
//! read by `model_config.rs`, and `model_folder.rs` finds a folder or a Hub id in the local
//! Hugging Face cache.

mod adapter;
mod add_tokens;
mod added_search;
mod ascii_fold;
mod ascii_stretches;
mod budget;
mod chat;
mod decode_bytes;
#[cfg(test)]
mod differential;
mod disallowed;
mod engine_wait;
mod error;
#[cfg(feature = "fastokens")]
mod fastokens;
mod file_tree;
mod function_calls;
mod gpt_tokenizer_models;
mod ids;
mod leading_drop;
mod loading;
mod long_texts;
mod marker_cuts;
mod model_config;
mod model_folder;
mod model_inputs;
mod models;
mod normalization;
pub mod openai;
mod outline;
mod pair_cache;
mod piece_cache;
mod pipeline;
mod precompiled_ascii;
mod ranks;
mod routing;
mod rows;
mod scratch;
mod special;
mod spelling;
mod stable;
mod stable_reader;
mod stream_decode;
mod tekken;
#[cfg(test)]
mod test_fixtures;
mod tiktoken_file;
mod tokenization_spaces;
mod tokenizer;
mod unicode_drift;
mod unstable;
mod vocabulary;

pub use add_tokens::NewToken;
pub use chat::{ChatMessage, HarmonyTerminator, RecipientPlacement};
pub use error::{DisallowedToken, Error, ErrorKind, panic_becomes_an_error, panic_text};
pub use function_calls::{
    ChatCompletionRequest, EnumValue, FunctionCallChoice, FunctionDefinition, MessageFunctionCall,
    ObjectProperties, RequestMessage, Schema, SchemaKind,
};
pub use ids::Ids;
pub use model_config::{ModelConfig, SpecialTokens};
pub use model_folder::{HubOptions, Located, file_url_to_path, locate};
pub use model_inputs::{
    IdArray, IdElement, Layout, ModelInputs, PadTo, Padding, Piece, RowsWindow, Unfilled, assemble,
    layout, overflow_mapping, pad_rows,
};
pub use models::{MODEL_TO_ENCODING, encoding_for_model, model_encodings};
pub use rows::{
    Returns, RowOptions, Rows, Side, Truncation, TruncationChoice, TruncationRequest,
    TruncationStrategy,
};
pub use scratch::Scratch;
pub use special::find_disallowed_special;
pub use special::{AllowedSpecial, SpecialToken};
pub use spelling::{edit_distance, is_typo};
pub use stream_decode::StreamDecoder;
pub use tekken::TEKKEN_NAME;
pub use tokenizer::{EncodeMode, Family, Tokenizer};
pub use unstable::UnstableEncoding;
pub use vocabulary::AddedToken;

/// What every engine does: append the ids of one text to a buffer.
///
/// One engine serves every thread at once. Working memory a thread reuses from text to text lives
/// in the caller's [`Scratch`], which also counts the locks an engine takes on state it shares
/// between threads.
pub trait Engine: Send + Sync {
    /// Appends the ids of `text` to `out`.
    ///
    /// `add_special_tokens` asks the post-processor to add its template tokens (`[CLS]`, `<s>`);
    /// `split_special` asks the engine to recognise added special tokens in the text and emit
    /// their ids, instead of encoding their text as ordinary text.
    fn encode_into<'e>(
        &'e self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
        scratch: &mut Scratch<'e>,
        out: &mut Ids,
    ) -> Result<(), Error>;

    /// [`encode_into`](Self::encode_into) with `truncation` instead of the file's (`None`: no
    /// truncation). Only the Hugging Face engines truncate; the others refuse.
    fn encode_truncated<'e>(
        &'e self,
        _text: &str,
        _add_special_tokens: bool,
        _split_special: bool,
        _truncation: Option<&Truncation>,
        _scratch: &mut Scratch<'e>,
        _out: &mut Ids,
    ) -> Result<(), Error> {
        Err(Error::new(
            ErrorKind::InvalidOption,
            "truncation applies to Hugging Face tokenizers",
        ))
    }

    /// Decodes ids the caller has checked are in the vocabulary.
    fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, Error>;
}
