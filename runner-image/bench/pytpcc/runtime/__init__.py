# -*- coding: utf-8 -*-

__all__ = ["executor", "loader"]
