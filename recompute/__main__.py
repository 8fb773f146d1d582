from recompute.cli import main

main()
