"""Text: reading a corpus file (`reading`: the paper's length filter, normalisation), text files
as lazy line sequences (`lines`), the subword vocabulary (`subwords`), skip-gram word vectors
(`skipgram`) and generated text as a user sees it (`outputs`)."""
