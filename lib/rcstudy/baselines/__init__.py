"""Baselines that need no pretrained model: lexical rules and small networks trained from scratch."""
