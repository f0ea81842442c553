; Inno Setup 6 script for gpudesk: installs the PyInstaller one-folder build (dist\gpudesk).
;
;   python -m PyInstaller --noconfirm --distpath dist --workpath build\pyinstaller packaging\gpudesk.spec
;   iscc /DAppVersion=0.1.0 packaging\windows\gpudesk.iss
;
; gives dist\gpudesk-<version>-windows-x64-setup.exe. Paths are relative to this file.
; Per-user or all-users install (the user chooses); the database lives in the user's
; AppData, never in {app}, so uninstalling leaves the user's data in place.

#ifndef AppVersion
  #error Pass the version: iscc /DAppVersion=x.y.z gpudesk.iss
#endif

[Setup]
AppId={{6C0E2B71-5D0B-4C8E-9F0B-3F1B9E2D7A41}
AppName=gpudesk
AppVersion={#AppVersion}
AppVerName=gpudesk {#AppVersion}
AppPublisher=gpudesk
DefaultDirName={autopf}\gpudesk
DefaultGroupName=gpudesk
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename=gpudesk-{#AppVersion}-windows-x64-setup
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
UninstallDisplayIcon={app}\gpudesk.exe
UninstallDisplayName=gpudesk {#AppVersion}

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "..\..\dist\gpudesk\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\gpudesk"; Filename: "{app}\gpudesk.exe"
Name: "{autodesktop}\gpudesk"; Filename: "{app}\gpudesk.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\gpudesk.exe"; Description: "{cm:LaunchProgram,gpudesk}"; Flags: nowait postinstall skipifsilent
