"""The plugin machinery: the name -> component registry (`components`), the hooks a plugin
implements (`hookspecs`), the loader of entry points (`loader`), what `harness list` shows
(`listing`), the checks a registration gets at once (`checks`) and what every command shares
(`commands`). Plugins reach all they need through `harness.plugin`."""
