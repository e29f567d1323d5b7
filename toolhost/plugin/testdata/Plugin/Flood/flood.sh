# Writes 100 MiB to stdout.
yes 'flood line' | head -c 104857600
