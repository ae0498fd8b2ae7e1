# Sphinx configuration of the course book (`make book`). The builder (autograder/book.py) copies
# this file next to the pages it writes: the executed learner notebooks, the home page and the
# companion's API reference. Everything is offline: no page loads anything from the network.

project = "PyTorch in Practice"
author = "PyTorch in Practice"
copyright = "2026, PyTorch in Practice"

extensions = [
    "myst_nb",  # notebooks and Markdown pages
    "sphinx.ext.autodoc",  # the API reference, from companion's docstrings
    "sphinx.ext.napoleon",  # their Google-style sections (Args:, Returns:, Raises:)
]

# The notebooks arrive executed (autograder/book.py runs them with the companion standing in for
# exercises not written yet): MyST-NB renders them as they are and never starts a kernel.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # a dataclass's "Attributes:" as fields, not a second description
add_module_names = True

html_theme = "sphinx_book_theme"
html_title = "PyTorch in Practice"
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,  # each chapter page links its notebook itself
    "use_fullscreen_button": False,
    "use_repository_button": False,
}
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"  # otherwise browsers ask the host for /favicon.ico
html_context = {"default_mode": "auto"}  # light or dark as the reader's system is
html_last_updated_fmt = None
html_copy_source = False  # the pages' sources would repeat the notebooks
html_show_sourcelink = False

# chapters/notebooks/ holds the downloadable learner notebooks: files to link, not pages
exclude_patterns = ["_build", "**.ipynb_checkpoints", "chapters/notebooks"]
suppress_warnings = ["myst.header"]
