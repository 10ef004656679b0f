"""The reference page of the benchmarks: one input, one formula, one chart."""
import plotly.graph_objects as go
import streamlit as st

x = st.number_input("x", value=1.0, key="x")
st.latex(rf"y = x^2 = {x * x:g}")
st.plotly_chart(go.Figure(go.Heatmap(z=[[x, 1.0], [2.0, 3.0]])))
