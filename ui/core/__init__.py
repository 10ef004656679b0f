"""What every page uses: the session's state, its limits and its link (the `state` package), the session's context
(`session`), the cached engine runs (`runs`), the sidebar's controls (`sidebar`), the catalogs' words (`i18n`,
`labels`), numbers (`format`), charts (`figures`), the generation settings (`generation`), the navigation, the
departures from the paper, the model's description (`model_card`), the process's settings (`server`) and Streamlit's
internals, fenced in one module."""
