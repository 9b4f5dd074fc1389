"""El curso en un JupyterHub: configuración, preparación y calificación.

``make hub`` arranca un JupyterHub local para una clase (ver ``hub/README.md`` y
CONTRIBUTING.md); ``make test-hub`` lo prueba de principio a fin.
"""
