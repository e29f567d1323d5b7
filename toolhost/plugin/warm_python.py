def _vcpnode_warm():
    # Started as "python -c <this> SCRIPT ARGS..." in the plugin's folder,
    # with its environment, sandbox and process tree. It imports the
    # modules of preload (filled in by vcpnode), reports on fd 3 that it is
    # ready ("p" instead when a module cannot be imported), then waits for
    # one byte on stdin: "g" runs SCRIPT as "python SCRIPT ARGS..." would;
    # end of input exits quietly. What a fresh start gives the script is
    # rebuilt exactly: sys.argv, sys.orig_argv, sys.path[0], the __main__
    # globals, the compile flags, the traceback of an uncaught exception
    # and the exit status; sys.argv and sys.path[0] are already the
    # script's while the preloaded modules are imported.
    import os, sys
    preload = ()
    g = globals()
    del g["_vcpnode_warm"]
    if sys.version_info < (3, 8):
        os.write(3, b"n")
        os._exit(0)
    # The first compile() in a process builds the interpreter's AST types
    # (a millisecond or two); done here it is off the call's path, and it
    # leaves nothing a script can see.
    compile("", "<vcpnode-warm>", "exec", dont_inherit=True)
    sys.argv = sys.argv[1:]
    if hasattr(sys, "orig_argv"):
        sys.orig_argv = sys.orig_argv[:1] + sys.orig_argv[3:]
    script = sys.argv[0]
    if not getattr(sys.flags, "safe_path", False):
        sys.path[0] = os.path.dirname(os.path.realpath(script))
    for name in preload:
        try:
            __import__(name)
        except BaseException as e:
            sys.stderr.write("cannot import %s: %s: %s\n" % (name, type(e).__name__, e))
            sys.stderr.flush()
            os.write(3, b"p")
            os._exit(1)
    os.write(3, b"r")
    os.close(3)
    if os.read(0, 1) != b"g":
        os._exit(0)
    path = script
    if sys.version_info >= (3, 9) and not os.path.isabs(script):
        path = os.path.join(os.getcwd(), script)
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        prog = sys.orig_argv[0] if hasattr(sys, "orig_argv") else "python"
        sys.stderr.write("%s: can't open file %r: [Errno %d] %s\n" % (prog, path, e.errno, e.strerror))
        sys.stderr.flush()
        os._exit(2)
    g["__file__"] = path
    g["__cached__"] = None
    g["__loader__"] = sys.modules["_frozen_importlib_external"].SourceFileLoader("__main__", path)
    try:
        exec(compile(source, path, "exec", dont_inherit=True), g)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException:
        t, e, tb = sys.exc_info()
        tb = tb.tb_next  # this function's frame: a fresh start has none
        e = e.with_traceback(tb)
        for stream in (sys.stderr, sys.stdout):
            try:
                stream.flush()
            except Exception:
                pass
        sys.last_type, sys.last_value, sys.last_traceback = t, e, tb
        if sys.version_info >= (3, 12):
            sys.last_exc = e
        sys.excepthook(t, e, tb)
        del t, e, tb
        g.pop("__file__", None)
        g.pop("__cached__", None)
        raise SystemExit(1)
    g.pop("__file__", None)
    g.pop("__cached__", None)
_vcpnode_warm()
