//! Which engine encodes what.
//!
//! The release candidate is the fast engine; the stable crate is the reference. A tokenizer goes to
//! the stable engine whole when the release candidate cannot read it.

/// The route a tokenizer's texts take.
#[derive(Debug, Clone)]
pub enum Route {
    /// Every text goes to the release-candidate engine.
    Pipeline,
    /// Every text goes to the stable engine, for the reason given.
    Stable { reason: String },
}

impl Route {
    /// The route for a tokenizer.json the release candidate has read.
    pub fn for_loaded(_json: &str) -> Route {
        Route::Pipeline
    }

    /// The route for a tokenizer.json the release candidate refused.
    pub fn stable_because(why: String) -> Route {
        Route::Stable {
            reason: format!("the 1.0 release candidate cannot read it ({why})"),
        }
    }

    /// True when `text` goes to the stable engine.
    #[inline]
    pub fn wants_stable(&self, _text: &str) -> bool {
        matches!(self, Route::Stable { .. })
    }

    /// The route in words, for users and tests.
    pub fn describe(&self) -> String {
        match self {
            Route::Pipeline => "pipeline: tokenizers 1.0.0-rc.3 encodes every text".to_owned(),
            Route::Stable { reason } => format!("stable: tokenizers 0.23 encodes every text, because {reason}"),
        }
    }
}
