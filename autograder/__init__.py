"""Calificación del curso con nbgrader: publicar, calificar y autocomprobar."""
