"""Text: reading a corpus file (`reading`: the paper's length filter, normalisation), text files
as lazy line sequences (`lines`), the subword vocabulary (`subwords`), skip-gram word vectors
(`skipgram`), generated text as a user sees it (`outputs`) and the words the word-level
measures count (`words`)."""
