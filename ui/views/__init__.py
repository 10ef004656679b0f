"""A step page's parts: its frame (`frame`: the fragment, intro, neighbour links), its steps (`steps`: a flow, one
step), how things are drawn (`draw`), the drill-down (`drill`), the weight editors (`editors`), the pickers
(`pickers`) and what the page has drawn and its link's view (`drawn`)."""
