"""One module per `facedown` subcommand; each defines register(subparsers) and keeps heavy imports inside its run."""
