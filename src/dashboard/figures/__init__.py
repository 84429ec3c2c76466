"""Plotly figures: one module per family of charts, the colours, and charts saved as images."""
