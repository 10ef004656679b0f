"""The reference page of the benchmarks: one input, one formula, one chart.

?input=grid makes the input a one-cell data editor, the same widget the app's weight editors use.
"""
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

if st.query_params.get("input") == "grid":
    x = float(st.data_editor(pd.DataFrame({"x": [1.0]}), key="grid").iloc[0, 0])
else:
    x = st.number_input("x", value=1.0, key="x")
st.latex(rf"y = x^2 = {x * x:g}")
st.plotly_chart(go.Figure(go.Heatmap(z=[[x, 1.0], [2.0, 3.0]])))
