"""CSV and JSON files: logs, registers, budgets. Filler rows use random.Random with fixed seeds."""

from __future__ import annotations

import csv
import io
import json
import random
from datetime import date as D, timedelta

from .blocks import Raw
from .org import FALCON_PM, HR, OSPREY_PM, RELIABILITY, SITE_A_MGR, SITE_B_MGR, SOLAR_LEAD, TECH_A, TECH_B


def _csv(rows) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)  # Excel-style export
    return buf.getvalue().encode("utf-8")


BR = [f"BR-T{i:02d}" for i in range(1, 13)]
CM = [f"CM-T{i:02d}" for i in range(1, 9)]
SITE_OF = {**{t: "Brackenridge" for t in BR}, **{t: "Carrow Moor" for t in CM}}
AERION_TECHS = ["K. Baxter (Aerion)", "S. Lindqvist (Aerion)", "P. Morrow (Aerion)", "R. Haddad (Aerion)"]


# ---------------------------------------------------------------------------------------------
# Turbine maintenance logs
# ---------------------------------------------------------------------------------------------
LOG_HEADER = [
    "date", "site", "turbine", "work_order", "work_type", "description", "technician",
    "downtime_hours", "oil_water_ppm", "oil_fe_ppm", "reference", "notes",
]


def cms_install_dates() -> dict:
    """Project Falcon CMS site-acceptance dates: Carrow Moor May-June 2023, Brackenridge Aug-Oct 2023."""
    cm = ["05-08", "05-15", "05-22", "05-30", "06-05", "06-12", "06-20", "06-22"]
    out = {t: D.fromisoformat(f"2023-{md}") for t, md in zip(CM, cm)}
    day = D(2023, 8, 7)
    for t in BR:
        while day.weekday() >= 5:
            day += timedelta(days=1)
        out[t] = day
        day += timedelta(days=6)
    return out


def _services(year: int, rng: random.Random, spring: tuple, autumn: tuple, oil_spring: bool, oil_autumn: bool):
    """Semi-annual services for all 20 turbines, one turbine per working day from the start dates."""
    rows = []
    for start, with_oil in ((spring, oil_spring), (autumn, oil_autumn)):
        day = D(year, *start)
        for t in BR + CM:
            while day.weekday() >= 5:
                day += timedelta(days=1)
            water = fe = ""
            if with_oil:
                water, fe = str(rng.randint(140, 390)), str(rng.randint(12, 44))
            rows.append([
                day.isoformat(), SITE_OF[t], t, "", "Scheduled service",
                "Semi-annual service per Aerion checklist" + ("; gearbox oil sample" if with_oil else ""),
                rng.choice(AERION_TECHS), str(rng.choice([8, 9, 10, 11, 12])), water, fe, "", "",
            ])
            day += timedelta(days=1)
    return rows


def _finish_log(rows, year: int):
    rows.sort(key=lambda r: (r[0], r[2]))
    for n, r in enumerate(rows, 1):
        r[3] = f"WO-{year}-{n:04d}"
    return _csv([LOG_HEADER] + rows)


def _override(rows, turbine: str, day: str, **changes):
    for r in rows:
        if r[2] == turbine and r[0] == day:
            for k, v in changes.items():
                r[LOG_HEADER.index(k)] = v
            return
    raise KeyError((turbine, day))


def maintenance_log_2022() -> bytes:
    rng = random.Random(2022)
    # 2022: oil sampling only in spring (12-month interval, OP-PRO-203 rev B)
    rows = _services(2022, rng, (3, 1), (9, 1), oil_spring=True, oil_autumn=False)
    cm04_spring = next(r for r in rows if r[2] == "CM-T04" and r[0] < "2022-06-01")[0]
    cm04_autumn = next(r for r in rows if r[2] == "CM-T04" and r[0] > "2022-06-01")[0]
    _override(rows, "CM-T04", cm04_spring, date="2022-03-16", oil_water_ppm="310", oil_fe_ppm="38")
    _override(
        rows, "CM-T04", cm04_autumn, date="2022-09-21", technician="P. Morrow (Aerion)",
        notes="Checklist item 7.4 desiccant breather N/A - part out of stock. Oil sample not due (12-month interval).",
    )
    br07 = next(r for r in rows if r[2] == "BR-T07" and r[0] < "2022-06-01")
    br07[0] = "2022-05-11"  # service postponed from March (turbine access)
    br07[11] = "Dropped spanner from nacelle during service - see IR-2022-003"
    br07[10] = "IR-2022-003"
    heron_day = D(2022, 5, 16)
    for t in BR:
        rows.append([heron_day.isoformat(), "Brackenridge", t, "", "Project",
                     "Project Heron: blade leading-edge repair and LEP, blades A/B/C", "Skyline Blade Services",
                     str(rng.choice([72, 76, 80, 84])), "", "", "Project Heron", ""])
        heron_day += timedelta(days=10)
    rows += [
        ["2022-01-19", "Carrow Moor", "CM-T05", "", "Corrective", "Pitch battery fault blade C - battery pack replaced", TECH_B, "14", "", "", "", ""],
        ["2022-02-07", "Brackenridge", "BR-T02", "", "Corrective", "Converter fan failure - fan replaced", TECH_A, "9", "", "", "", ""],
        ["2022-06-28", "Carrow Moor", "CM-T04", "", "Corrective", "Gearbox oil temperature warning (78 °C) - cooler fan cleaned, reset", TECH_B, "6", "", "", "", "No further alarms"],
        ["2022-08-03", "Brackenridge", "BR-T11", "", "Corrective", "Yaw brake pressure low - hydraulic hose replaced", TECH_A, "11", "", "", "", ""],
        ["2022-11-22", "Carrow Moor", "CM-T06", "", "Corrective", "Service lift drive motor failed; technician injury during ladder climb", TECH_B, "0", "", "", "IR-2022-014", "Lift out of service"],
        ["2022-11-30", "Carrow Moor", "CM-T06", "", "Corrective", "Service lift drive motor replaced", "Aerion", "5", "", "", "IR-2022-014", ""],
        ["2022-12-14", "Carrow Moor", "CM-T01", "", "Inspection", "Annual ladder, anchor and lift inspection (Aerion)", "Aerion", "4", "", "", "", "Pass"],
    ]
    return _finish_log(rows, 2022)


def maintenance_log_2023() -> bytes:
    rng = random.Random(2023)
    rows = _services(2023, rng, (3, 20), (9, 4), oil_spring=True, oil_autumn=True)
    # fleet oil sampling after IR-2023-007 (CA-6) is the spring service sample; two turbines at caution level
    for t, water, fe in (("CM-T02", "620", "47"), ("BR-T09", "540", "41")):
        day = next(r for r in rows if r[2] == t and r[0] < "2023-06-01")[0]
        _override(rows, t, day, oil_water_ppm=water, oil_fe_ppm=fe,
                  notes="Caution level (> 500 ppm water) - breather replaced, resample in 30 days", reference="IR-2023-007 CA-6")
    cm04_spring = next(r for r in rows if r[2] == "CM-T04" and r[0] < "2023-06-01")
    rows.remove(cm04_spring)  # turbine was down for the gearbox exchange
    rows += [
        ["2023-03-14", "Carrow Moor", "CM-T04", "", "Corrective", "Gearbox ISS bearing temperature high (92 °C), auto-stop 02:49. Borescope: ISS bearing spalling, pinion pitting", TECH_B, "0", "", "", "IR-2023-007", "Turbine locked out pending gearbox exchange"],
        ["2023-03-15", "Carrow Moor", "CM-T04", "", "Oil sample", "Post-failure gearbox oil sample to Lubricheck", TECH_B, "0", "1450", "212", "IR-2023-007", "ISO 4406 22/20/17; breather silica gel fully saturated"],
        ["2023-04-24", "Carrow Moor", "CM-T04", "", "Major component", "Gearbox exchange BDS-GB3000-1187 -> BDS-GB3000-1342, Mercer Heavy Lift 600 t crane", "Aerion", str(41 * 24), "", "", "IR-2023-007", "Returned to service 25 Apr 2023"],
        ["2023-08-16", "Brackenridge", "BR-T03", "", "Corrective", "Lightning strike blade B - receptor and down-conductor damaged", TECH_A, "0", "", "", "IR-2023-019", ""],
        ["2023-08-31", "Brackenridge", "BR-T03", "", "Corrective", "Rope-access blade repair, tip receptor and down-conductor replaced", "Aerion", str(16 * 24), "", "", "IR-2023-019", "Returned to service 1 Sep 2023"],
        ["2023-09-26", "Carrow Moor", "CM-T06", "", "Corrective", "Up-tower replacement of HSS generator-side bearing after CMS alert", "Aerion", "48", "", "", "Project Falcon", "Cost £14,500"],
        ["2023-06-05", "Brackenridge", "BR-T11", "", "Inspection", "Height safety equipment examination - damaged lanyard found", TECH_A, "0", "", "", "IR-2023-012", ""],
    ]
    for n, t in enumerate(BR + CM):  # CA-2: breathers on all wind turbines
        day = D(2023, 4, 11) + timedelta(days=n * 16 // 20)
        if t != "CM-T04":
            rows.append([day.isoformat(), SITE_OF[t], t, "", "Corrective", "Desiccant breather replaced (IR-2023-007 CA-2)", TECH_B if t in CM else TECH_A, "1", "", "", "IR-2023-007", ""])
    for t, day in cms_install_dates().items():  # Falcon installs: Site B first (May-Jun), then Site A (Aug-Oct)
        rows.append([day.isoformat(), SITE_OF[t], t, "", "Project", "Project Falcon: CMS and oil particle counter installed, SAT passed", "Veridian Sensing", "12", "", "", "Project Falcon", ""])
    return _finish_log(rows, 2023)


def maintenance_log_2024() -> bytes:
    rng = random.Random(2024)
    rows = _services(2024, rng, (4, 2), (9, 2), oil_spring=True, oil_autumn=True)
    rows += [
        ["2024-01-18", "Brackenridge", "BR-T09", "", "Inspection", "CMS alert: planet bearing defect frequency in gearbox planetary stage", RELIABILITY, "0", "", "", "Project Falcon", "Planned repair summer 2024"],
        ["2024-07-09", "Brackenridge", "BR-T09", "", "Major component", "Planned up-tower gearbox repair: planet bearings replaced", "Brandt Drive Systems", "120", "", "", "Project Falcon", "Cost £148,000 (budget 160,000)"],
        ["2024-10-08", "Carrow Moor", "CM-T02", "", "Corrective", "Yaw misalignment fault - yaw drive output shaft sheared, brake pads 3 mm", TECH_B, "0", "", "", "IR-2024-005", ""],
        ["2024-10-16", "Carrow Moor", "CM-T02", "", "Corrective", "Yaw drive and all yaw brake pads replaced", "Aerion", str(8 * 24), "", "", "IR-2024-005", ""],
    ]
    cm02 = next(r for r in rows if r[2] == "CM-T02" and r[0] < "2024-06-01")
    cm02[11] = "Yaw brake pads 5 mm"
    rows = [r for r in rows if r[0] <= "2024-10-31"]
    return _finish_log(rows, 2024)


# ---------------------------------------------------------------------------------------------
# Registers
# ---------------------------------------------------------------------------------------------
def incident_register() -> bytes:
    H = ["ref", "date", "site", "asset", "category", "severity", "title", "governing_policy", "status", "report"]
    R = "Operations/Incident-Reports"
    rows = [
        ["IR-2022-001", "2022-01-12", "Hollins Flats", "", "Near miss", "Low", "Trip hazard: cable cover lifted by frost", "HS-POL-001", "Closed", ""],
        ["IR-2022-003", "2022-05-11", "Brackenridge", "BR-T07", "Near miss", "High potential", "Dropped object from nacelle", "HS-POL-004", "Closed", f"{R}/2022/IR-2022-003-Dropped-Object-BR-T07.pdf"],
        ["IR-2022-006", "2022-07-02", "Carrow Moor", "", "Environmental", "Low", "Minor hydraulic oil spill at crane pad (0.5 l)", "HS-POL-001", "Closed", ""],
        ["IR-2022-011", "2022-09-29", "Hollins Flats", "HF-INV-03", "Near miss", "High potential", "Arc flash at inverter during fan replacement", "HS-POL-005", "Closed", f"{R}/2022/IR-2022-011-Near-Miss-Arc-Flash-HF-INV-03.docx"],
        ["IR-2022-014", "2022-11-22", "Carrow Moor", "CM-T06", "First aid", "Low", "Hand slipped during ladder climb; fall arrester locked", "HS-POL-004", "Closed", f"{R}/2022/IR-2022-014-Minor-Injury-Ladder-Climb-CM-T06.txt"],
        ["IR-2023-002", "2023-01-24", "Brackenridge", "", "Near miss", "Low", "Ice fall near BR-T05 access road", "HS-POL-001", "Closed", ""],
        ["IR-2023-007", "2023-03-14", "Carrow Moor", "CM-T04", "Equipment failure", "Major", "Gearbox failure (ISS bearing) - water-contaminated oil", "HS-POL-001", "Closed", f"{R}/2023/IR-2023-007-Gearbox-Failure-CM-T04.pdf"],
        ["IR-2023-012", "2023-06-05", "Brackenridge", "", "Near miss", "Medium", "Damaged fall-arrest lanyard found in service", "HS-POL-004", "Closed", f"{R}/2023/IR-2023-012-Damaged-Fall-Arrest-Lanyard.docx"],
        ["IR-2023-015", "2023-07-11", "Hollins Flats", "HF-INV-05", "Equipment failure", "Low", "IGBT module failure, inverter offline 3 days", "HS-POL-005", "Closed", ""],
        ["IR-2023-019", "2023-08-16", "Brackenridge", "BR-T03", "Equipment damage", "Medium", "Lightning strike on blade B", "HS-POL-001", "Closed", f"{R}/2023/IR-2023-019-Lightning-Strike-BR-T03.md"],
        ["IR-2023-021", "2023-11-02", "Carrow Moor", "", "Vehicle", "Low", "Vehicle collision on access track", "HS-POL-007", "Closed", f"{R}/2023/IR-2023-021-Vehicle-Collision-Access-Track.txt"],
        ["IR-2024-001", "2024-02-20", "Carrow Moor", "CM-T07", "Near miss", "Low", "Service lift stopped between platforms; lift rescue used", "HS-POL-004", "Closed", ""],
        ["IR-2024-002", "2024-08-22", "Hollins Flats", "HF-BESS-01-C2", "Equipment failure", "Medium", "BESS container HVAC fault during commissioning (cell temp 41 °C)", "HS-POL-005", "Open", f"{R}/2024/IR-2024-002-BESS-HVAC-Fault-Osprey-Commissioning.pdf"],
        ["IR-2024-004", "2024-09-03", "Hollins Flats", "", "Near miss", "Low", "Excavator working close to buried 33 kV cable", "HS-POL-005", "Closed", ""],
        ["IR-2024-005", "2024-10-08", "Carrow Moor", "CM-T02", "Equipment failure", "Medium", "Yaw drive failure", "HS-POL-001", "Open", f"{R}/2024/IR-2024-005-Yaw-System-Failure-CM-T02.docx"],
    ]
    return _csv([H] + rows)


def asset_register() -> bytes:
    turbines = []
    cms_dates = {t: d.isoformat() for t, d in cms_install_dates().items()}
    for i, t in enumerate(BR, 1):
        turbines.append({
            "tag": t, "asset_id": f"NWR-A-WTG-{i:02d}", "site": "A", "model": "Aerion AW-2.3", "rated_kw": 2300,
            "hub_height_m": 80, "rotor_diameter_m": 93, "commissioned": "2012-10-01",
            "gearbox": {"model": "BDS-GB2300", "serial": f"BDS-GB2300-{400 + i * 7}"},
            "cms_installed": cms_dates[t],
        })
    for i, t in enumerate(CM, 1):
        gb = {"model": "BDS-GB3000", "serial": f"BDS-GB3000-{1150 + i * 9}" if t != "CM-T04" else "BDS-GB3000-1342"}
        if t == "CM-T04":
            gb["history"] = [{"date": "2023-04-24", "event": "Gearbox exchanged after ISS bearing failure",
                              "removed_serial": "BDS-GB3000-1187", "reference": "IR-2023-007"}]
        turbines.append({
            "tag": t, "asset_id": f"NWR-B-WTG-{i:02d}", "site": "B", "model": "Aerion AW-3.0", "rated_kw": 3000,
            "hub_height_m": 90, "rotor_diameter_m": 112, "commissioned": "2016-06-15",
            "gearbox": gb, "cms_installed": cms_dates[t],
        })
    data = {
        "export": {"system": "Northwind Asset Register (AR-2)", "exported": "2024-06-30T17:00:00Z", "exported_by": RELIABILITY},
        "company": "Northwind Renewables Ltd",
        "sites": [
            {"code": "A", "name": "Brackenridge Wind Farm", "type": "onshore wind", "capacity_mw": 27.6,
             "commissioned": "2012-10-01", "manager": SITE_A_MGR, "grid_connection_kv": 33},
            {"code": "B", "name": "Carrow Moor Wind Farm", "type": "onshore wind", "capacity_mw": 24.0,
             "commissioned": "2016-06-15", "manager": SITE_B_MGR, "grid_connection_kv": 33,
             "landlord": "Ardmore Estates"},
            {"code": "C", "name": "Hollins Flats Solar Park", "type": "solar PV", "capacity_mwp": 18.0,
             "export_limit_mw": 15.0, "commissioned": "2019-07-01", "manager": SOLAR_LEAD, "grid_connection_kv": 33},
        ],
        "assets": {
            "wind_turbines": turbines,
            "inverters": [
                {"tag": f"HF-INV-{i:02d}", "asset_id": f"NWR-C-INV-{i:02d}", "site": "C", "rating_mva": 2.5,
                 "commissioned": "2019-07-01", "refurbished": "2023-11" if i <= 3 else None}
                for i in range(1, 7)
            ],
            "battery_storage": {
                "tag": "HF-BESS-01", "site": "C", "project": "Osprey", "status": "under construction",
                "rated_mw": 5.0, "usable_mwh": 10.0, "chemistry": "LFP",
                "containers": [{"tag": f"HF-BESS-01-C{i}", "nameplate_mwh": 2.58} for i in range(1, 5)],
                "pcs": [{"tag": f"HF-PCS-0{i}", "rating_mva": 2.75} for i in (1, 2)],
                "epc_contract": "NWR-C-2024-003",
            },
            "substations": [
                {"tag": "BR-SUB", "site": "A", "voltage_kv": "33/0.69"},
                {"tag": "CM-SUB", "site": "B", "voltage_kv": "33/0.69"},
                {"tag": "HF-SUB", "site": "C", "voltage_kv": "33/0.4", "bays": 4},
            ],
        },
    }
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def training_matrix() -> bytes:
    H = ["name", "role", "site", "gwo_bst_wah_expiry", "gwo_first_aid_expiry", "rescue_drill_last", "hv_authorisation", "notes"]
    rows = [
        [TECH_B, "Senior Wind Technician", "Carrow Moor", "2024-09-14", "2024-09-14", "2023-10-18", "Competent Person (LV)", ""],
        [TECH_A, "Wind Technician", "Brackenridge", "2025-02-03", "2025-02-03", "2023-10-25", "Competent Person (LV)", ""],
        ["Callum Fraser", "Wind Technician", "Carrow Moor", "2024-01-22", "2024-01-22", "2023-10-18", "", "GWO refresher booked Jan 2024"],
        ["Nadia Haddad", "Wind Technician", "Brackenridge", "2025-06-11", "2025-06-11", "2023-10-25", "", ""],
        ["Tom Ellery", "Wind Technician", "Carrow Moor", "2023-12-05", "2023-12-05", "2023-04-19", "", "EXPIRES SOON - no climbing after 5 Dec 2023"],
        [SITE_A_MGR, "Site Manager", "Brackenridge", "2024-11-30", "2024-11-30", "2023-10-25", "Authorised Person (HV)", ""],
        [SITE_B_MGR, "Site Manager", "Carrow Moor", "2024-05-16", "2024-05-16", "2023-10-18", "Authorised Person (HV)", ""],
        [SOLAR_LEAD, "Solar Operations Lead", "Hollins Flats", "", "2025-03-01", "", "Authorised Person (HV)", "No climbing duties"],
        ["Ben Okoro", "Solar Technician", "Hollins Flats", "", "2024-08-20", "", "Competent Person (LV)", ""],
        [RELIABILITY, "Reliability Engineer", "Head office", "2024-07-02", "2024-07-02", "2023-04-19", "", "Climbs for CMS inspections"],
        [OSPREY_PM, "Electrical Engineer", "Head office", "", "2025-01-15", "", "Senior Authorised Person", ""],
        [FALCON_PM, "Project Manager", "Head office", "2024-03-09", "2024-03-09", "", "", "Site visits only"],
    ]
    return _csv([H] + rows)


# ---------------------------------------------------------------------------------------------
# Budgets and project tables
# ---------------------------------------------------------------------------------------------
def fy2022_operating_budget() -> bytes:
    H = ["cost_centre", "line", "budget_gbp", "owner", "notes"]
    rows = [
        ["OPS-WIND", "O&M service agreement (Aerion Wind Services)", "1590000", "Tomasz Nowak", "New 5-year agreement from 1 Feb 2022"],
        ["OPS-WIND", "Oil analysis (Lubricheck) - 12-month interval", "21000", "Daniel Achterberg", "Interval extended from 6 months in 2021"],
        ["OPS-WIND", "Project Heron - blade leading-edge repair", "310000", "Grace Whitfield", "Brackenridge, 36 blades"],
        ["OPS-WIND", "Minor repairs and consumables", "240000", "Tomasz Nowak", ""],
        ["OPS-SOLAR", "Solar O&M and vegetation management", "295000", "Elena Petrova", ""],
        ["OPS-ALL", "Land lease rents", "388000", "Rajesh Iyer", ""],
        ["OPS-ALL", "Grid use-of-system charges", "1085000", "Rajesh Iyer", ""],
        ["OPS-ALL", "Insurance", "442000", "Rajesh Iyer", ""],
        ["CORP", "Staff costs (58 FTE)", "3210000", "Fiona McLeod", ""],
        ["CORP", "Office, IT and professional fees", "575000", "Rajesh Iyer", ""],
        ["HSE", "Training (GWO, HV, first aid)", "64000", "Catriona Bell", ""],
        ["HSE", "Height safety equipment examination", "18000", "Catriona Bell", "6-monthly, both wind sites"],
    ]
    total = sum(int(r[2]) for r in rows)
    rows.append(["TOTAL", "Total operating budget FY2022", str(total), "", ""])
    return _csv([H] + rows)


def fy2023_budget_tracker() -> bytes:
    H = ["type", "line", "owner", "approved_budget_gbp", "revised_budget_gbp", "actual_gbp", "variance_gbp", "comment"]
    rows = [
        ["Capital", "Project Falcon - CMS and SCADA historian", "Tomasz Nowak", 1250000, 1420000, 1352900, None, "Revised by Board 18 Apr 2023 (CR-003, oil particle counters +170,000); 33,500 carried into FY2024"],
        ["Capital", "Major component reserve", "Tomasz Nowak", 400000, 400000, 359000, None, "CM-T04 gearbox exchange (IR-2023-007)"],
        ["Capital", "Hollins Flats inverter refurbishment HF-INV-01 to 03", "Elena Petrova", 180000, 180000, 171800, None, ""],
        ["Capital", "Project Osprey - feasibility and grid application", "Priya Sandhu", 120000, 120000, 108000, None, ""],
        ["Capital", "Carrow Moor microwave link upgrade", "Owen Pritchard", 55000, 55000, 58300, None, "Delivered for Falcon"],
        ["Capital", "IT and office equipment", "Rajesh Iyer", 75000, 75000, 68000, None, ""],
        ["Capital", "Capital contingency", "Rajesh Iyer", 95000, 95000, 78000, None, "Lightning repair BR-T03 (insurance excess 25,000) and others"],
        ["Operating", "O&M service agreement (Aerion)", "Tomasz Nowak", 1640000, 1640000, 1640000, None, ""],
        ["Operating", "Oil analysis, inspections and minor repairs", "Daniel Achterberg", 285000, 285000, 340500, None, "6-monthly sampling restored; breathers (IR-2023-007)"],
        ["Operating", "Staff costs", "Fiona McLeod", 3420000, 3420000, 3398000, None, ""],
    ]
    out = [H]
    for r in rows:
        r[6] = r[4] - r[5]
        out.append([str(c) for c in r])
    return _csv(out)


def fy2024_capital_tracker() -> bytes:
    H = ["line", "owner", "budget_gbp", "actual_to_2024-09-30_gbp", "forecast_gbp", "status"]
    rows = [
        ["Project Osprey - 5 MW / 10 MWh BESS", "Priya Sandhu", "4600000", "3710000", "4520000", "Commissioning; energisation forecast 14 Oct 2024"],
        ["Project Falcon - carry-over", "Aisha Okafor", "45000", "33500", "33500", "Closed (project outturn 1,386,400)"],
        ["BR-T09 planned gearbox repair", "Tomasz Nowak", "160000", "148000", "148000", "Complete July 2024"],
        ["Major component reserve", "Tomasz Nowak", "450000", "0", "95000", "CM-T02 yaw drive (IR-2024-005) expected"],
        ["CMS phase 2 study (yaw and pitch)", "Daniel Achterberg", "30000", "12000", "30000", "Report Jan 2025"],
        ["IT and office equipment", "Rajesh Iyer", "60000", "41200", "60000", ""],
    ]
    return _csv([H] + rows)


def falcon_vendor_evaluation() -> bytes:
    H = ["vendor", "price_gbp", "delivery_weeks", "technical_score_60", "commercial_score_25", "support_score_15", "total_100", "compliant_R1_R12", "oil_option_R8_price_gbp", "comment"]
    rows = [
        ["Veridian Sensing Ltd", "842000", "8", "52.0", "19.0", "11.5", "82.5", "Yes", "128000", "Recommended. Strongest diagnostics service; oil particle counter option"],
        ["Orbis Monitoring", "806000", "16", "46.5", "20.5", "9.0", "76.0", "Yes", "161000", "Long hardware lead time"],
        ["Tellwave Systems", "719000", "10", "39.0", "23.5", "6.0", "68.5", "No (R9 historian retention)", "n/a", "Needs third-party historian (~90,000)"],
    ]
    return _csv([H] + rows)


def osprey_risk_register() -> bytes:
    H = ["id", "risk", "likelihood_1_5", "impact_1_5", "score", "owner", "mitigation", "status", "updated"]
    rows = [
        ["OSP-R01", "Container delivery delayed (10-week factory lead time)", 3, 4, None, OSPREY_PM, "Weekly factory progress calls; early FAT", "Closed - delivered 16 Jul 2024", "2024-07-20"],
        ["OSP-R02", "Thermal event / HVAC failure in battery container", 2, 5, None, OSPREY_PM, "HVAC redundancy, BMS de-rating at 38 °C, trip at 45 °C, off-gas detection, fire service engagement", "Occurred - IR-2024-002 (C2 HVAC fan wiring); containment worked", "2024-08-30"],
        ["OSP-R03", "Export limitation scheme fails DNO witness test", 2, 4, None, OSPREY_PM, "Factory test of ELS logic; test window procedure with DNO", "Open", "2024-09-10"],
        ["OSP-R04", "Grid offer expires before energisation (31 Oct 2024)", 2, 5, None, OSPREY_PM, "Track critical path; extension costs 12,000", "Open - float reduced to 17 days", "2024-09-10"],
        ["OSP-R05", "Ground conditions worse than survey (peat pockets)", 2, 3, None, "Halden Energy Systems", "Additional trial pits; piled foundation option priced", "Closed", "2024-06-05"],
        ["OSP-R06", "Curtailment lower than modelled reduces solar-shifting revenue", 3, 2, None, SOLAR_LEAD, "Revenue stack includes frequency response", "Open", "2024-03-01"],
        ["OSP-R07", "Interference with live solar park during construction", 3, 3, None, SOLAR_LEAD, "Northwind escort in inverter stations; permit-to-dig", "Open - near miss IR-2024-004", "2024-09-03"],
        ["OSP-R08", "Cell price rise before EPC signature", 2, 3, None, OSPREY_PM, "Fixed-price EPC", "Closed - signed 2 Apr 2024", "2024-04-02"],
    ]
    out = [H]
    for r in rows:
        r[4] = r[2] * r[3]
        out.append([str(c) for c in r])
    return _csv(out)


def heron_inspection_findings() -> bytes:
    rng = random.Random(1717)
    H = ["turbine", "blade", "inspection_date", "erosion_category_1_5", "damage_length_m", "lightning_receptor_ok", "repair_priority", "inspector"]
    out = [H]
    day = D(2022, 4, 4)
    for t in BR:
        for b in "ABC":
            cat = rng.choice([2, 3, 3, 3, 4, 4, 4, 5]) if not (t == "BR-T06" and b == "C") else 1
            length = round(cat * rng.uniform(0.8, 1.6), 1)
            prio = "High" if cat >= 4 else ("Medium" if cat == 3 else "Low")
            out.append([t, b, day.isoformat(), str(cat), str(length), "Yes", prio, "Skyline Blade Services (drone)"])
        day += timedelta(days=1 if day.weekday() < 4 else 3)
    return _csv(out)


def raw_files() -> list[Raw]:
    return [
        Raw("Operations/Maintenance-Logs/2022/Turbine-Maintenance-Log-2022.csv", D(2022, 12, 31), maintenance_log_2022()),
        Raw("Operations/Maintenance-Logs/2023/Turbine-Maintenance-Log-2023.csv", D(2023, 12, 31), maintenance_log_2023()),
        Raw("Operations/Maintenance-Logs/2024/Turbine-Maintenance-Log-2024.csv", D(2024, 10, 31), maintenance_log_2024()),
        Raw("Operations/Incident-Reports/Incident-Register.csv", D(2024, 10, 31), incident_register()),
        Raw("Operations/Asset-Register/asset-register.json", D(2024, 6, 30), asset_register()),
        Raw("HR/Training/Training-Matrix-2023.csv", D(2023, 11, 30), training_matrix()),
        Raw("Finance/Budgets/2022/FY2022-Operating-Budget.csv", D(2022, 1, 10), fy2022_operating_budget()),
        Raw("Finance/Budgets/2023/FY2023-Budget-Tracker.csv", D(2023, 12, 20), fy2023_budget_tracker()),
        Raw("Finance/Budgets/2024/FY2024-Capital-Budget-Tracker.csv", D(2024, 10, 4), fy2024_capital_tracker()),
        Raw("Engineering/Project-Falcon/2023/Falcon-Vendor-Evaluation.csv", D(2023, 2, 24), falcon_vendor_evaluation()),
        Raw("Engineering/Project-Osprey/2024/Osprey-Risk-Register.csv", D(2024, 9, 10), osprey_risk_register()),
        Raw("Engineering/Project-Heron/2022/Heron-Inspection-Findings.csv", D(2022, 4, 20), heron_inspection_findings()),
    ]
