"""Los widgets interactivos de los cuadernos del curso.

Como en ``helpers.checks``, cada módulo del curso tiene aquí su submódulo con
los widgets de su cuaderno (``helpers.widgets.bandits``, ``helpers.widgets.dqn``...).
``helpers.widgets.view`` guarda lo común a todos: el estilo, la figura y la
vista perezosa (``WidgetView``).
"""
