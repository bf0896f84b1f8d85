"""Adapters running the released weights of InferSent, QuickThought and LASER in torch.

Each adapter module imports torch; `common` does not, so registration and availability checks
stay cheap.
"""
