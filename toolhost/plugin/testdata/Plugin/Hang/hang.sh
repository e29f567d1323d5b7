# Ignores SIGTERM and starts a grandchild that ignores it too and keeps our
# stdout open. Both write their pid (atomically, via rename) to the plugin folder.
trap '' TERM
sh -c 'echo $$ > grandchild.pid.tmp && mv grandchild.pid.tmp grandchild.pid; exec sleep 600' &
echo $$ > leader.pid.tmp && mv leader.pid.tmp leader.pid
exec sleep 600
