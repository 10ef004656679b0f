"""The sidebar's "copy link" button: copies the address bar as it is when clicked, so the link holds what the page
shows then (a step page writes its head, step, layer and cell into the URL without rerunning the sidebar), less a
student's own id (me=, ui/classroom/following.py): a classmate who opens the link is another student.

A small st.components.v2 element in the app's own page (no iframe): the clipboard API where the page is a secure
context (https, localhost), else the browser's copy command; its words come from the catalog, as text."""
import streamlit as st

JS = """
export default function({parentElement, data}) {
    const button = parentElement.querySelector("button");
    const status = parentElement.querySelector("span");
    button.textContent = data.label;
    button.title = data.help;
    button.onclick = async () => {
        const address = new URL(window.location.href);
        if (address.searchParams.has("me")) {  // a student's own id for the class quiz: a classmate gets a new one
            address.searchParams.delete("me");
        }
        const link = address.href;
        let copied = false;
        try {
            await navigator.clipboard.writeText(link);
            copied = true;
        } catch (error) {
            const field = document.createElement("textarea");
            field.value = link;
            document.body.appendChild(field);
            field.select();
            copied = document.execCommand("copy");
            field.remove();
        }
        status.textContent = copied ? data.done : data.failed;
        status.dataset.copied = copied;
    };
}
"""
CSS = """
button { font: inherit; font-size: 0.875rem; padding: 0.25rem 0.75rem; border-radius: 0.5rem; cursor: pointer;
         border: 1px solid rgba(49, 51, 63, 0.2); background: white; color: rgb(49, 51, 63); }
button:hover { border-color: rgb(255, 75, 75); color: rgb(255, 75, 75); }
span { margin-left: 0.6rem; font-size: 0.875rem; color: rgb(33, 195, 84); }
span[data-copied="false"] { color: rgb(255, 43, 43); }
"""
HTML = "<button type='button'></button><span></span>"
_copy_link = st.components.v2.component("copy_link", html=HTML, css=CSS, js=JS)


def copy_link_button(t) -> None:
    _copy_link(key="copy_link", data={"label": t("ctl.share"), "help": t("ctl.share_help"),
                                      "done": t("ctl.share_done"), "failed": t("ctl.share_failed")})
