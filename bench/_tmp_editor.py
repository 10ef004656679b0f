import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import sys
N = int(st.query_params.get("n", "0"))
C = int(st.query_params.get("c", "0"))
with st.expander("e", expanded=True):
    df = st.data_editor(pd.DataFrame([[1.0, 2.0], [3.0, 4.0]]), key="e")
st.latex(rf"scores = {df.iloc[0, 0]:g}")
for i in range(N):
    st.latex(r"\begin{bmatrix}" + " \\\\ ".join(" & ".join(f"{x:.4f}" for x in row) for row in np.random.rand(2, 4) * df.iloc[0,0]) + r"\end{bmatrix}")
for i in range(C):
    st.plotly_chart(go.Figure(go.Heatmap(z=np.random.rand(2, 4) * df.iloc[0,0])), key=f"c{i}")
