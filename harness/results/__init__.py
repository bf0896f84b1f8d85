"""What results.json holds: the building blocks every record uses (`records`), the typed
`RunResults` with reading and writing (`model`), published tables and the models their rows
measured (`declarations`), and what produced a run (`provenance`)."""
