"""v2s-harness: evaluate sentence encoders by regenerating sentences from their vectors (Vec2Sent).

Kerscher & Eger (2020), "Vec2Sent: Probing Sentence Embeddings with Natural Language Generation".
"""

__version__ = "0.1.0"
