"""The commands: one thin module per `minigo COMMAND` (its arguments and `main`) over the layers below."""
