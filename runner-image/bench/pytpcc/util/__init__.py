# -*- coding: utf-8 -*-

__all__ = ["scaleparameters", "rand", "nurand", "results"]