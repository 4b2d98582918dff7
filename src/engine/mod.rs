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
//! tables embedded in the binary (`openai.rs`).

#[cfg(test)]
mod differential;
mod error;
mod ids;
pub mod openai;
mod pipeline;
mod routing;
mod special;
mod stable;
mod tokenizer;
mod unicode_drift;

pub use error::{Error, ErrorKind};
pub use ids::Ids;
pub use special::AllowedSpecial;
pub use tokenizer::{EncodeMode, Family, Tokenizer};

/// What every engine does: append the ids of one text to a buffer.
///
/// Engines hold no per-call state behind `&self` that another thread could contend for beyond what
/// the engine itself documents, so one engine serves every worker at once.
pub trait Engine: Send + Sync {
    /// Appends the ids of `text` to `out`.
    ///
    /// `add_special_tokens` asks the post-processor to add its template tokens (`[CLS]`, `<s>`);
    /// `split_special` asks the engine to recognise added special tokens in the text and emit
    /// their ids, instead of encoding their text as ordinary text.
    fn encode_into(
        &self,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
        out: &mut Ids,
    ) -> Result<(), Error>;

    /// Decodes ids the caller has checked are in the vocabulary.
    fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, Error>;

    /// Locks one `encode_into` call takes on state the engine shares between threads, as its
    /// source shows; `None` where that depends on the text (a cache hit or miss).
    fn locks_per_call(&self) -> Option<u64>;
}
