"""The main window's parts: the catalogue loader, the sidebar, the menus, the Help menu's actions,
the database recovery flow and the remembered window state (main_window.py assembles them)."""
