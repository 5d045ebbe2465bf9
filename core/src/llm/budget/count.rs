//! Counting tokens: the model's own tokenizer where it is known (OpenAI's BPE encodings,
//! through `tiktoken-rs`), else the stated approximation of one token per four bytes.

use tiktoken_rs::tokenizer::{get_tokenizer, Tokenizer};
use tiktoken_rs::CoreBPE;

/// How a text is counted.
#[derive(Clone, Copy)]
pub enum TokenCounter {
    /// The model's BPE encoding (`cl100k_base`, `o200k_base`), loaded on its first count
    /// (about a second: a process that renders no prompt never pays it).
    Bpe { encoding: &'static str, bpe: fn() -> &'static CoreBPE },
    /// One token per four bytes, rounded up: what is used for a model whose tokenizer is not
    /// known (Ollama, llama.cpp server, vLLM models, and any other name).
    Approx,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl TokenCounter {
    /// The counter of `model`: a routing prefix (`openai/`) and an Ollama tag (`:latest`) are
    /// ignored; a name no OpenAI encoding is known for is counted by the approximation.
    pub fn for_model(model: &str) -> Self {
        let name = model.rsplit('/').next().unwrap_or(model);
        let name = name.split(':').next().unwrap_or(name);
        match get_tokenizer(name) {
            Some(Tokenizer::O200kBase | Tokenizer::O200kHarmony) => {
                TokenCounter::Bpe { encoding: "o200k_base", bpe: tiktoken_rs::o200k_base_singleton }
            }
            Some(Tokenizer::Cl100kBase) => {
                TokenCounter::Bpe { encoding: "cl100k_base", bpe: tiktoken_rs::cl100k_base_singleton }
            }
            _ => TokenCounter::Approx,
        }
    }

    /// The encoding's name, or `bytes/4`.
    pub fn name(&self) -> &'static str {
        match self {
            TokenCounter::Bpe { encoding, .. } => encoding,
            TokenCounter::Approx => "bytes/4",
        }
    }

    pub fn count(&self, text: &str) -> usize {
        match self {
            TokenCounter::Bpe { bpe, .. } => bpe().encode_ordinary(text).len(),
            TokenCounter::Approx => text.len().div_ceil(4),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_model_is_counted_with_its_encoding_and_any_other_by_bytes() {
        assert_eq!(TokenCounter::for_model("gpt-4o-mini").name(), "o200k_base");
        assert_eq!(TokenCounter::for_model("openai/gpt-4o").name(), "o200k_base");
        assert_eq!(TokenCounter::for_model("gpt-4").name(), "cl100k_base");
        assert_eq!(TokenCounter::for_model("llama3.2:latest").name(), "bytes/4");
        assert_eq!(TokenCounter::Approx.count("12345"), 2);
        let words = "the quick brown fox jumps over the lazy dog";
        assert_eq!(TokenCounter::for_model("gpt-4o").count(words), 9, "one token a word");
    }
}
