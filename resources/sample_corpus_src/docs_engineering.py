"""Engineering: Project Falcon (CMS retrofit, 2023-24), Project Osprey (BESS, 2024), Project Heron (blades, 2022)."""

from datetime import date as D

from .blocks import H1, H2, H3, META, OL, P, TABLE, UL, Doc
from .org import (
    BESS_EPC, CMS_VENDOR, DNO, ENG, FALCON_PM, FD, HSE, MD, OEM, OSPREY_PM, RELIABILITY, SITE_A,
    SITE_A_MGR, SITE_B, SITE_B_MGR, SITE_C, SOLAR_LEAD, TECH_A, TECH_B,
)

FALCON = "Engineering/Project-Falcon"
OSPREY = "Engineering/Project-Osprey"
HERON = "Engineering/Project-Heron"

DOCS = [
    # =========================================================================================
    # Project Falcon
    # =========================================================================================
    Doc(
        f"{FALCON}/2023/Falcon-Project-Charter.docx",
        D(2023, 1, 16),
        "Project Falcon - Project Charter",
        FALCON_PM,
        subject="Project Falcon: drivetrain condition monitoring and SCADA historian upgrade",
        keywords="Project Falcon; condition monitoring; CMS; SCADA; charter; budget",
        pages=[[
            H1("Project Falcon - Project Charter"),
            META([
                ("Project", "Falcon - drivetrain condition monitoring (CMS) and SCADA historian upgrade"),
                ("Sponsor", f"{ENG}, Head of Engineering"),
                ("Project manager", FALCON_PM),
                ("Date", "16 January 2023"),
                ("Approved budget", "£1,250,000 (FY2023 capital budget, approved by the Board on 6 December 2022)"),
            ]),
            H2("1. Background"),
            P(f"""Northwind operates 20 wind turbines: 12 Aerion AW-2.3 at {SITE_A} and 8 Aerion AW-3.0 at
            {SITE_B}. None has a vibration-based drivetrain condition-monitoring system (CMS). Major component
            failures are found only when a SCADA alarm trips the turbine, by which time secondary damage has
            usually occurred. Industry data suggest that a gearbox replacement costs 8 to 20 times more than a
            bearing replacement carried out up-tower when a defect is found early."""),
            H2("2. Objectives"),
            OL([
                "Install a CMS on all 20 wind turbines by 31 October 2023.",
                "Upgrade the SCADA historian from 10-minute averages to 1-second data with 10-year retention.",
                "Give the Reliability Engineer a single dashboard combining vibration, SCADA and oil analysis data.",
                "Detect at least 80% of drivetrain bearing defects at least 3 months before functional failure.",
            ]),
            H2("3. Scope"),
            P("""In scope: sensors, data acquisition units, site networking, historian, analytics platform,
            training, and 12 months of vendor diagnostic support. Out of scope: blade monitoring, yaw and pitch
            monitoring (possible phase 2), and the Hollins Flats solar park."""),
            H2("4. Milestones"),
            TABLE([
                ["Milestone", "Target date"],
                ["Vendor shortlist and technical specification", "28 Feb 2023"],
                ["Contract award", "31 Mar 2023"],
                ["Installation, Brackenridge (Site A)", "May - Jul 2023"],
                ["Installation, Carrow Moor (Site B)", "Aug - Oct 2023"],
                ["Go-live and handover to Operations", "Nov 2023"],
                ["Project closeout", "Feb 2024"],
            ]),
            H2("5. Governance"),
            P(f"""Fortnightly project meetings chaired by the project manager; monthly report to the Executive
            team; quarterly progress report to the Board. Change requests above £25,000 need approval from the
            sponsor and the Finance Director ({FD}); changes above £100,000 need Board approval."""),
            H2("6. Key risks"),
            UL([
                "Turbine access constrained by weather and by Aerion's service schedule.",
                "Network bandwidth at Carrow Moor (single microwave link) may not carry 1-second data.",
                "Alarm fatigue if thresholds are set too tightly during the learning period.",
            ]),
        ]],
    ),
    Doc(
        f"{FALCON}/2023/Falcon-CMS-Technical-Specification.pdf",
        D(2023, 2, 20),
        "Project Falcon - CMS Technical Specification",
        RELIABILITY,
        subject="Technical specification for drivetrain condition monitoring",
        keywords="Project Falcon; CMS; vibration; accelerometer; specification; ISO 10816-21; oil particle counter",
        pages=[
            [
                H1("Project Falcon - Condition Monitoring System Technical Specification"),
                META([
                    ("Document", "NWR-ENG-SPEC-031, revision B"),
                    ("Author", f"{RELIABILITY}, Reliability Engineer"),
                    ("Reviewed", f"{ENG}; {FALCON_PM}"),
                    ("Date", "20 February 2023"),
                ]),
                H2("1. Introduction"),
                P("""This specification defines the minimum technical requirements for the drivetrain condition
                monitoring system (CMS) to be installed under Project Falcon on 20 wind turbines. It forms
                Schedule 2 of the supply contract. Tenderers must state compliance against each numbered
                requirement."""),
                H2("2. Turbines in scope"),
                TABLE([
                    ["Site", "Turbines", "Model", "Rated power", "Gearbox", "Rotor speed"],
                    ["Brackenridge (A)", "BR-T01 to BR-T12", "Aerion AW-2.3", "2.3 MW", "BDS-GB2300, 1 planetary + 2 helical stages", "9-16 rpm"],
                    ["Carrow Moor (B)", "CM-T01 to CM-T08", "Aerion AW-3.0", "3.0 MW", "BDS-GB3000, 1 planetary + 2 helical stages", "7-13 rpm"],
                ]),
                H2("3. General requirements"),
                UL([
                    "R1: The system shall be certified to GL/DNV guidelines for condition monitoring of wind turbines.",
                    "R2: The data acquisition unit (DAU) shall operate from -25 °C to +55 °C and be rated IP54 or better.",
                    "R3: Installation shall not require drilling of load-bearing components; sensors are stud-mounted on adhesive pads.",
                    "R4: Installation time shall not exceed 1.5 days per turbine with a two-person team.",
                ]),
            ],
            [
                H2("4. Sensors and data acquisition"),
                TABLE([
                    ["Ch.", "Location", "Sensor", "Frequency range"],
                    ["1", "Main bearing", "Low-frequency accelerometer, 500 mV/g", "0.1 Hz - 1 kHz"],
                    ["2", "Gearbox planetary stage", "Low-frequency accelerometer, 500 mV/g", "0.1 Hz - 1 kHz"],
                    ["3", "Gearbox intermediate-speed shaft (ISS)", "IEPE accelerometer, 100 mV/g", "0.5 Hz - 10 kHz"],
                    ["4", "Gearbox high-speed shaft (HSS), rotor side", "IEPE accelerometer, 100 mV/g", "0.5 Hz - 10 kHz"],
                    ["5", "Gearbox HSS, generator side", "IEPE accelerometer, 100 mV/g", "0.5 Hz - 10 kHz"],
                    ["6", "Generator drive end", "IEPE accelerometer, 100 mV/g", "0.5 Hz - 10 kHz"],
                    ["7", "Generator non-drive end", "IEPE accelerometer, 100 mV/g", "0.5 Hz - 10 kHz"],
                    ["8", "Nacelle (tower fore-aft)", "Low-frequency accelerometer, 500 mV/g", "0.1 Hz - 100 Hz"],
                    ["9", "HSS speed reference", "Inductive tachometer, 1 pulse/rev", "-"],
                ]),
                P("""R5: The DAU shall sample all vibration channels simultaneously at a minimum of 25.6 kHz with
                24-bit resolution. R6: Time waveforms of at least 10 seconds per channel shall be captured every
                2 hours when the turbine is above 50% rated power, plus on every alarm. R7: The DAU shall store at
                least 30 days of data locally if the network link is lost."""),
                H2("5. Oil monitoring (added in revision B)"),
                P("""R8: An online oil particle counter (ISO 4406 codes, 4/6/14 micron channels) and a relative
                humidity/water-activity sensor shall be offered as an option for installation in the gearbox
                lubrication loop. Results shall be trended on the same platform as vibration data. This option
                was made mandatory for Carrow Moor after the CM-T04 gearbox failure (IR-2023-007)."""),
            ],
            [
                H2("6. Alarm thresholds"),
                P("""Initial alarm limits follow ISO 10816-21 for horizontal-axis wind turbines with gearbox.
                After a 3-month learning period, limits shall be adjusted per turbine to statistical baselines
                (mean + 3 standard deviations for alert, + 6 for alarm), subject to approval by the Reliability
                Engineer."""),
                TABLE([
                    ["Component", "Measure", "Band", "Alert", "Alarm"],
                    ["Main bearing", "Velocity RMS", "0.1 - 10 Hz", "0.3 mm/s", "0.5 mm/s"],
                    ["Gearbox planetary", "Acceleration RMS", "0.1 - 10 Hz", "0.3 m/s²", "0.5 m/s²"],
                    ["Gearbox planetary", "Velocity RMS", "10 - 1000 Hz", "3.5 mm/s", "5.6 mm/s"],
                    ["Gearbox ISS / HSS", "Acceleration RMS", "10 - 2000 Hz", "7.5 m/s²", "12.0 m/s²"],
                    ["Gearbox ISS / HSS", "Velocity RMS", "10 - 1000 Hz", "3.5 mm/s", "5.6 mm/s"],
                    ["Generator DE / NDE", "Velocity RMS", "10 - 5000 Hz", "6.0 mm/s", "10.0 mm/s"],
                    ["Oil (option R8)", "ISO 4406 code", "-", "worse than 17/15/12", "worse than 20/18/15"],
                ]),
                H2("7. Data, network and security"),
                UL([
                    "R9: SCADA historian to store 1-second data for all turbines, retained for 10 years (estimated 2.4 TB).",
                    "R10: Site links: fibre at Brackenridge; microwave plus 4G backup at Carrow Moor, minimum 10 Mbit/s per site.",
                    "R11: The CMS network shall be segregated from the turbine control network by a firewall; no inbound connections from the internet.",
                    "R12: Alarms shall be e-mailed to the Reliability Engineer and the site manager within 15 minutes.",
                ]),
            ],
            [
                H2("8. Acceptance testing"),
                OL([
                    "Factory acceptance test of one DAU with simulated bearing-fault signals.",
                    "Site acceptance test per turbine: all channels live, signal-to-noise ratio better than 40 dB, tachometer verified against SCADA rotor speed.",
                    "Fleet acceptance after 30 days of continuous operation with data availability of at least 98%.",
                ]),
                H2("9. Training and support"),
                P("""The supplier shall provide 3 days of analyst training for two Northwind engineers, a
                half-day familiarisation for site technicians, and 12 months of remote diagnostic support with
                monthly fleet health reports and a response to critical alarms within 1 working day."""),
                H2("10. Compliance table"),
                P("""Tenderers shall complete the compliance table (requirements R1-R12) in the tender return
                spreadsheet. Non-compliance with R3, R5, R9 or R11 will disqualify a tender. Vendor scores are
                recorded in Falcon-Vendor-Evaluation.csv."""),
            ],
        ],
    ),
    Doc(
        f"{FALCON}/2023/Falcon-Meeting-Notes-2023-02-08.md",
        D(2023, 2, 8),
        "Project Falcon meeting notes 8 Feb 2023",
        FALCON_PM,
        pages=[[
            H1("Project Falcon - Project Meeting Notes, 8 February 2023"),
            META([
                ("Attendees", f"{FALCON_PM} (chair), {ENG}, {RELIABILITY}, {SITE_A_MGR}, {SITE_B_MGR}"),
                ("Location", "Kestrel House, meeting room 2 and Teams"),
            ]),
            H2("1. Tender responses"),
            P("""Three tenders were received by the 3 February deadline: Veridian Sensing Ltd, Orbis Monitoring
            and Tellwave Systems. Daniel presented the technical scoring. Tellwave is non-compliant with R9
            (historian retention) and would need a third-party historian. Orbis is compliant but quoted 16 weeks
            for hardware delivery. Veridian scored highest on technical merit and offers the oil particle
            counter option."""),
            H2("2. Installation sequence"),
            P("""Charter plan is Brackenridge first (fibre already installed, older turbines). Owen asked whether
            Carrow Moor could go first because its AW-3.0 gearboxes have had more temperature alarms. Tomasz:
            keep Brackenridge first for now because the Carrow Moor microwave link needs upgrading, but review
            after the link survey."""),
            H2("3. Budget"),
            P("""Current forecast is £1,238,000 against the approved £1,250,000, leaving only £12,000 of
            contingency. Aisha to raise this with Rajesh Iyer. Oil particle counters (approx. £8,500 per turbine)
            are NOT in the budget."""),
            H2("Actions"),
            UL([
                "Daniel: clarification questions to Veridian and Orbis by 10 Feb.",
                "Owen: Carrow Moor link survey booked for 15 Feb.",
                "Aisha: recommendation paper to the sponsor by 24 Feb; contract target 3 March.",
            ]),
        ]],
    ),
    Doc(
        f"{FALCON}/2023/Falcon-Meeting-Notes-2023-03-22.md",
        D(2023, 3, 22),
        "Project Falcon meeting notes 22 Mar 2023",
        FALCON_PM,
        pages=[[
            H1("Project Falcon - Project Meeting Notes, 22 March 2023"),
            META([
                ("Attendees", f"{FALCON_PM} (chair), {ENG}, {RELIABILITY}, {SITE_B_MGR}, {FD} (item 3)"),
                ("Location", "Teams"),
            ]),
            H2("1. CM-T04 gearbox failure"),
            P("""Daniel summarised the Carrow Moor CM-T04 gearbox failure of 14 March (incident IR-2023-007,
            report in preparation). Oil water content was 1,450 ppm and the desiccant breather was saturated.
            The SCADA data show the ISS bearing temperature drifting upward for about 6 weeks before the alarm.
            A CMS with ISS accelerometers would very likely have detected the bearing defect in January."""),
            H2("2. Re-sequencing"),
            P("""Decision: install Carrow Moor (Site B) first, starting May 2023, followed by Brackenridge from
            August. The microwave link survey (15 Feb) showed 18 Mbit/s is available, which meets R10. Veridian
            confirmed they can reverse the sequence at no cost."""),
            H2("3. Budget change request"),
            P("""Add online oil particle counters and water sensors (spec option R8) to all 20 turbines:
            Veridian price £128,000 as contract variation 1, plus £42,000 for installation and historian
            integration - total £170,000. This takes the project budget from £1,250,000 to £1,420,000. Rajesh
            confirmed the FY2023 capital contingency cannot absorb it; as the change exceeds £100,000 it needs
            Board approval. Aisha to write the Board paper for the 18 April meeting."""),
            H2("Actions"),
            UL([
                "Aisha: Board paper CR-003 (budget increase to £1,420,000) by 6 April.",
                "Daniel: issue IR-2023-007 by 6 April; update OP-PRO-203 to 6-monthly sampling.",
                "Owen: site logistics plan for Carrow Moor installation from 8 May.",
            ]),
        ]],
    ),
    Doc(
        f"{FALCON}/2023/Falcon-Meeting-Notes-2023-06-14.md",
        D(2023, 6, 14),
        "Project Falcon meeting notes 14 Jun 2023",
        FALCON_PM,
        pages=[[
            H1("Project Falcon - Project Meeting Notes, 14 June 2023"),
            META([
                ("Attendees", f"{FALCON_PM} (chair), {RELIABILITY}, {SITE_B_MGR}, {TECH_B}, Mark Henshaw (Veridian)"),
                ("Location", "Carrow Moor site office"),
            ]),
            H2("1. Installation progress"),
            P("""Six of the eight Carrow Moor turbines have CMS hardware installed and passing site acceptance
            tests (CM-T01 to CM-T06). Average installation time is 1.3 days per turbine, within R4. CM-T07 and
            CM-T08 are scheduled for 19-23 June, weather permitting. Oil particle counters are fitted on CM-T01
            to CM-T04; the remaining four are waiting for hydraulic adaptors."""),
            H2("2. Early findings"),
            P("""CM-T06 HSS generator-side channel shows a bearing outer-race defect frequency with amplitude at
            about 40% of the alert level. Daniel will trend it weekly. No action needed yet."""),
            H2("3. Safety"),
            P("""No incidents. Marcus reminded Veridian installers of the tool lanyard and hatch rules in
            OP-PRO-112. Veridian staff all hold GWO Working at Height certificates (checked by Owen)."""),
            H2("4. Cost"),
            P("""Spend to date £612,000. Forecast at completion £1,398,000 against the revised budget of
            £1,420,000 approved by the Board on 18 April 2023."""),
            H2("Actions"),
            UL([
                "Mark Henshaw: hydraulic adaptors delivered by 30 June.",
                "Owen: confirm crane-free access for CM-T07/T08 with Aerion.",
                "Aisha: Brackenridge mobilisation plan for 7 August.",
            ]),
        ]],
    ),
    Doc(
        f"{FALCON}/2023/Falcon-Progress-Report-Q3-2023.pdf",
        D(2023, 10, 6),
        "Project Falcon - Quarterly Progress Report Q3 2023",
        FALCON_PM,
        subject="Board progress report",
        keywords="Project Falcon; progress; budget; CMS; early detection",
        pages=[
            [
                H1("Project Falcon - Progress Report, Q3 2023"),
                META([
                    ("Period", "1 July - 30 September 2023"),
                    ("Prepared by", f"{FALCON_PM}, Project Manager"),
                    ("For", "Board meeting, 10 October 2023"),
                    ("Overall status", "GREEN (schedule AMBER)"),
                ]),
                H2("1. Progress"),
                P("""Carrow Moor (Site B) installation was completed on 20 July 2023: all eight turbines have
                vibration CMS and online oil particle counters, and passed site acceptance tests. Brackenridge
                (Site A) installation started on 7 August; by 30 September nine of twelve turbines were complete
                (BR-T01 to BR-T09). BR-T10 to BR-T12 are planned for October. The SCADA historian upgrade went
                live on 4 September and is storing 1-second data for all 20 turbines."""),
                H2("2. Early benefits"),
                P("""On 12 September the CMS raised an alert on CM-T06: the HSS generator-side bearing
                outer-race defect first seen in June had grown to 110% of the alert level. An up-tower bearing
                replacement was carried out on 26 September at a cost of £14,500 with 2 days of downtime. Without
                early detection the likely outcome was a gearbox exchange similar to CM-T04 (about £359,000 plus
                41 days of lost generation)."""),
            ],
            [
                H2("3. Cost"),
                TABLE([
                    ["Item", "Budget (£)", "Actual to 30 Sep (£)", "Forecast (£)"],
                    ["CMS hardware and software (Veridian, incl. variation 1)", "970,000", "812,600", "970,000"],
                    ["Installation and site networking", "196,000", "151,200", "188,000"],
                    ["SCADA historian upgrade", "142,000", "118,400", "138,000"],
                    ["Project management and training", "62,000", "20,100", "58,000"],
                    ["Contingency", "50,000", "0", "30,000"],
                    ["Total", "1,420,000", "1,102,300", "1,384,000"],
                ]),
                P("""The budget of £1,420,000 is the revised FY2023 budget approved by the Board on 18 April
                2023 (originally £1,250,000). Forecast outturn is £1,384,000."""),
                H2("4. Risks and issues"),
                UL([
                    "Schedule AMBER: high winds in September lost 6 installation days; go-live moved from October to 6 November 2023.",
                    "Alarm tuning: 14 nuisance alerts in September, mainly generator channels; baselines will be applied after the 3-month learning period.",
                ]),
                H2("5. Next quarter"),
                P("""Complete BR-T10 to BR-T12, fleet acceptance test (30 days, target data availability 98%),
                analyst training, handover to Operations, and closeout report in February 2024."""),
            ],
        ],
    ),
    Doc(
        f"{FALCON}/2024/Falcon-Closeout-Report.pdf",
        D(2024, 2, 16),
        "Project Falcon - Closeout Report",
        FALCON_PM,
        subject="Project closeout",
        keywords="Project Falcon; closeout; lessons learned; final cost; CMS",
        pages=[
            [
                H1("Project Falcon - Closeout Report"),
                META([
                    ("Prepared by", f"{FALCON_PM}, Project Manager"),
                    ("Sponsor", f"{ENG}, Head of Engineering"),
                    ("Date", "16 February 2024"),
                ]),
                H2("1. Summary"),
                P("""Project Falcon installed drivetrain condition monitoring on all 20 Northwind wind turbines,
                online oil particle counters on all gearboxes, and a new SCADA historian with 1-second data. The
                system went live on 6 November 2023, one week later than the revised plan, and passed fleet
                acceptance on 8 December 2023 with 99.1% data availability. The project was handed over to
                Operations on 15 January 2024."""),
                H2("2. Objectives achieved"),
                TABLE([
                    ["Objective", "Target", "Result"],
                    ["CMS on all wind turbines", "20 by 31 Oct 2023", "20 by 27 Oct 2023"],
                    ["1-second SCADA historian", "Live by Oct 2023", "Live 4 Sep 2023"],
                    ["Single reliability dashboard", "Nov 2023", "Live 6 Nov 2023"],
                    ["Early defect detection", ">= 80% detected 3 months ahead", "2 of 2 defects found so far (CM-T06 HSS bearing, BR-T09 planet bearing)"],
                ]),
            ],
            [
                H2("3. Final cost"),
                TABLE([
                    ["", "£"],
                    ["Original approved budget (Board, 6 Dec 2022)", "1,250,000"],
                    ["Change request CR-003: oil particle counters (Board, 18 Apr 2023)", "170,000"],
                    ["Revised budget", "1,420,000"],
                    ["Final outturn", "1,386,400"],
                    ["Under budget", "33,600"],
                ]),
                P("""Of the outturn, £1,352,900 was spent in FY2023 and £33,500 in FY2024 (final Veridian
                milestone and training). The Veridian contract NWR-C-2023-014 closed at £970,000 including
                variation 1."""),
                H2("4. Benefits to date"),
                P("""Two defects have been found early. The CM-T06 HSS bearing was replaced up-tower in September
                2023 for £14,500. In January 2024 the CMS detected a planet bearing defect on BR-T09 at
                Brackenridge; a planned gearbox repair is scheduled for the summer 2024 low-wind season, avoiding
                an unplanned failure in winter. Estimated avoided cost in the first four months: more than
                £400,000, which already exceeds one third of the project cost."""),
            ],
            [
                H2("5. Lessons learned"),
                UL([
                    "A serious incident (IR-2023-007) changed priorities mid-project; the change process worked, and the Board approved CR-003 within four weeks.",
                    "Weather risk for nacelle work in autumn was under-estimated; future projects should plan up-tower work for April to August.",
                    "Involving site technicians in sensor placement reduced installation time to 1.3 days per turbine.",
                    "Alarm thresholds need a learning period; 14 nuisance alerts in the first month damaged confidence.",
                ]),
                H2("6. Handover and open items"),
                UL([
                    "Veridian remote diagnostic support runs until 6 November 2024.",
                    "Possible phase 2: yaw and pitch monitoring, to be assessed in FY2025 planning.",
                    "Spare sensors (2 of each type) held at Carrow Moor stores.",
                ]),
                P(f"""Approved for closure: {ENG} (sponsor), {FD} (Finance Director). Reported to the Board on
                12 March 2024."""),
            ],
        ],
    ),
    # =========================================================================================
    # Project Osprey
    # =========================================================================================
    Doc(
        f"{OSPREY}/2024/Osprey-BESS-Design-Basis.pdf",
        D(2024, 3, 1),
        "Project Osprey - Battery Energy Storage System Design Basis",
        OSPREY_PM,
        subject="Design basis for a 5 MW / 10 MWh BESS at Hollins Flats Solar Park",
        keywords="Project Osprey; BESS; battery storage; LFP; design basis; Hollins Flats; grid connection",
        pages=[
            [
                H1("Project Osprey - BESS Design Basis"),
                META([
                    ("Document", "NWR-ENG-DB-044, revision 1"),
                    ("Author", f"{OSPREY_PM}, Electrical Engineer and Project Manager"),
                    ("Reviewed", f"{ENG}; {SOLAR_LEAD}; {HSE} (section 4)"),
                    ("Date", "1 March 2024"),
                ]),
                H2("1. Purpose and site"),
                P(f"""Project Osprey will add a battery energy storage system (BESS) to {SITE_C}. The solar park
                has a peak capacity of 18 MWp, six 2.5 MVA central inverters (HF-INV-01 to HF-INV-06) and a
                connection agreement for 15 MW export at 33 kV. On sunny days in summer output is curtailed for
                an average of 310 hours a year because export would exceed 15 MW. Osprey will store that energy
                and release it in the evening peak, and earn revenue from frequency-response services."""),
                P("""The BESS compound will occupy 0.35 ha in the north-east corner of the park, next to the
                existing 33 kV substation, on land already leased for the solar park."""),
            ],
            [
                H2("2. System sizing"),
                TABLE([
                    ["Parameter", "Value"],
                    ["Rated power at point of connection", "5 MW"],
                    ["Usable energy at point of connection (beginning of life)", "10 MWh (2-hour duration)"],
                    ["Cell chemistry", "Lithium iron phosphate (LFP)"],
                    ["Battery containers", "4 x 20 ft, 2.58 MWh nameplate each (HF-BESS-01-C1 to C4)"],
                    ["Power conversion system (PCS)", "2 x 2.75 MVA inverter/transformer skids"],
                    ["Round-trip efficiency (AC, at POC)", ">= 86%"],
                    ["Design life", "15 years, 1 cycle per day; capacity augmentation in year 8"],
                    ["End-of-warranty capacity", ">= 70% of beginning-of-life energy"],
                ]),
                H2("3. Grid connection"),
                P(f"""The BESS connects to a new 33 kV bay in the existing Hollins Flats substation. {DNO} has
                confirmed that combined export from solar and BESS remains limited to 15 MW, enforced by an export
                limitation scheme with a response time under 1 second. Import for charging from the grid is
                permitted up to 5 MW. The grid connection offer was accepted on 14 February 2024; see the separate
                grid connection summary."""),
                H2("4. Operating modes"),
                UL([
                    "Solar shifting: charge from curtailed solar, discharge in the 16:00-19:00 peak.",
                    "Frequency response: dynamic frequency services with response in under 1 second.",
                    "Arbitrage: charge from the grid at low prices when solar is insufficient.",
                ]),
            ],
            [
                H2("5. Safety design"),
                P("""The design follows NFPA 855 and the relevant national fire guidance for grid-scale battery
                storage. The fire and rescue service was consulted on 20 February 2024."""),
                UL([
                    "Minimum separation of 3 m between battery containers and 25 m to the site boundary.",
                    "Each container: off-gas (hydrogen and carbon monoxide) detection, explosion venting panels, and an aerosol fire suppression system.",
                    "HVAC per container keeps cells between 15 °C and 35 °C; the BMS de-rates above 38 °C and trips the container at 45 °C.",
                    "Cell-level voltage and temperature monitoring; BMS alarms relayed to the control room 24/7.",
                    "Emergency response plan and water supply (two 100 m3 tanks) agreed with the fire service.",
                    "Electrical isolation under OP-PRO-118 with a 15-minute PCS discharge wait; HV switching under the HV Safety Rules.",
                ]),
                H2("6. Environmental"),
                P("""Noise from HVAC and PCS cooling is limited to 35 dB(A) at the nearest dwelling (Hollins Farm,
                640 m). Surface-water drainage will pass through an interceptor with a shut-off valve so that
                fire-fighting water can be contained."""),
            ],
            [
                H2("7. Programme"),
                TABLE([
                    ["Milestone", "Date"],
                    ["Board investment approval", "12 Mar 2024"],
                    ["EPC contract award (Halden Energy Systems)", "Apr 2024"],
                    ["Civil works and foundations", "May - Jun 2024"],
                    ["Container and PCS delivery", "Jul 2024"],
                    ["Commissioning and testing", "Aug - Sep 2024"],
                    ["Energisation", "30 Sep 2024"],
                ]),
                H2("8. Budget"),
                TABLE([
                    ["Item", "£"],
                    ["EPC contract (estimate)", "3,950,000"],
                    ["Grid connection works (DNO)", "285,000"],
                    ["Owner's engineer, surveys and consents", "140,000"],
                    ["Insurance during construction", "45,000"],
                    ["Contingency (5%)", "180,000"],
                    ["Total capital budget", "4,600,000"],
                ]),
                P("""Expected revenue is £690,000 per year (solar shifting £260,000, frequency response £310,000,
                arbitrage £120,000), giving a simple payback of 6.7 years before augmentation costs."""),
            ],
            [
                H2("9. Open design questions"),
                OL([
                    "Augmentation strategy in year 8: add a fifth container or replace modules.",
                    "Whether the Falcon condition-monitoring platform can also trend BESS HVAC and cell temperature data.",
                    "Spare parts holding: one spare PCS power module and one HVAC unit proposed.",
                ]),
                H2("10. References"),
                UL([
                    "Osprey risk register (Osprey-Risk-Register.csv)",
                    "Osprey grid connection summary",
                    "FY2024 capital budget",
                    "HS-POL-005 Electrical Safety Policy; OP-PRO-118 Isolation and Lockout",
                ]),
            ],
        ],
    ),
    Doc(
        f"{OSPREY}/2024/Osprey-Kickoff-Meeting-Notes.md",
        D(2024, 4, 10),
        "Project Osprey kick-off meeting notes",
        OSPREY_PM,
        pages=[[
            H1("Project Osprey - Kick-off Meeting, 10 April 2024"),
            META([
                ("Attendees", f"{OSPREY_PM} (chair), {ENG}, {SOLAR_LEAD}, {HSE}, Ingrid Solberg and two engineers ({BESS_EPC})"),
                ("Location", "Hollins Flats site office"),
            ]),
            H2("1. Contract and scope"),
            P("""Contract NWR-C-2024-003 with Halden Energy Systems was signed on 2 April 2024 (value
            £3,950,000, fixed price, lump sum). Halden is principal contractor under CDM for the BESS compound.
            Northwind remains responsible for the existing solar park and the 33 kV substation."""),
            H2("2. Programme"),
            P("""Ingrid presented the baseline programme: civils start 13 May, containers delivered week of
            15 July, commissioning from 12 August, energisation 30 September 2024. The critical path is container
            delivery from the factory (10-week lead time)."""),
            H2("3. Safety and site rules"),
            UL([
                "Catriona briefed the Hollins Flats site rules: solar park is live at all times; no entry to the inverter stations without a Northwind escort.",
                "Halden to submit the construction phase plan by 3 May and the BESS emergency response plan by 1 July.",
                "Fire service familiarisation visit to be arranged before first energisation.",
            ]),
            H2("4. Interfaces"),
            P("""Elena raised the export limitation scheme: during testing combined export must never exceed
            15 MW, so BESS discharge tests are to be done early in the morning or on overcast days. Priya to
            agree a test window procedure with the DNO."""),
            H2("Actions"),
            UL([
                "Halden: construction phase plan (3 May), emergency response plan (1 July).",
                "Priya: DNO test window procedure (31 May).",
                "Elena: confirm site compound and laydown area (19 April).",
            ]),
        ]],
    ),
    Doc(
        f"{OSPREY}/2024/Osprey-Grid-Connection-Summary.docx",
        D(2024, 5, 21),
        "Project Osprey - Grid Connection Summary",
        OSPREY_PM,
        subject="Grid connection for the Hollins Flats BESS",
        keywords="Project Osprey; grid connection; DNO; export limitation; 33 kV",
        pages=[[
            H1("Project Osprey - Grid Connection Summary"),
            META([
                ("Prepared by", OSPREY_PM),
                ("Date", "21 May 2024"),
                ("DNO", DNO),
                ("Offer reference", "EGN/HF/2023/1187-B (accepted 14 February 2024)"),
            ]),
            H2("Connection arrangement"),
            P("""The BESS connects to a new 33 kV circuit breaker bay in Northwind's Hollins Flats substation.
            No reinforcement of the DNO network is needed because total export is capped at the existing
            15 MW agreed capacity. The DNO requires an export limitation scheme (ELS) that measures export at
            the point of connection and curtails the BESS, then the solar inverters, within 1 second of export
            exceeding 15 MW."""),
            H2("Key terms"),
            TABLE([
                ["Term", "Value"],
                ["Maximum export capacity (solar + BESS)", "15 MW"],
                ["Maximum import capacity", "5 MW (BESS charging)"],
                ["Connection voltage", "33 kV"],
                ["Connection charge", "£285,000 (50% paid on acceptance, 50% on energisation)"],
                ["Energisation date in offer", "By 31 October 2024"],
                ["Protection", "G99 compliant; loss-of-mains by RoCoF 1 Hz/s and vector shift disabled"],
            ]),
            H2("Testing"),
            P("""G99 compliance tests must be witnessed by the DNO. BESS discharge tests while the solar park is
            generating are allowed only if the ELS has been proven first. The witness test is provisionally booked
            for 24 September 2024."""),
            H2("Risks"),
            UL([
                "If the ELS test fails, the DNO will not allow export from the BESS; energisation slips.",
                "The offer expires if energisation has not happened by 31 October 2024; an extension costs £12,000.",
            ]),
        ]],
    ),
    Doc(
        f"{OSPREY}/2024/Osprey-Commissioning-Plan.txt",
        D(2024, 7, 15),
        "Project Osprey - Commissioning Plan",
        OSPREY_PM,
        pages=[[
            H1("Project Osprey - Commissioning Plan"),
            META([
                ("Document", "NWR-OSP-CP-001 rev 2"),
                ("Prepared by", f"{OSPREY_PM} (Northwind) with {BESS_EPC}"),
                ("Date", "15 July 2024"),
            ]),
            H2("1. Stages"),
            TABLE([
                ["Stage", "Activity", "Planned dates"],
                ["C0", "Pre-commissioning checks, cable tests, HVAC run-in", "12-16 Aug 2024"],
                ["C1", "Container and BMS commissioning, C1 to C4", "19-30 Aug 2024"],
                ["C2", "0.5C charge/discharge cycling, one container at a time", "26 Aug - 6 Sep 2024"],
                ["C3", "PCS and 33 kV bay energisation on import only", "9-13 Sep 2024"],
                ["C4", "Export limitation scheme proving", "16-20 Sep 2024"],
                ["C5", "G99 witness test with the DNO", "24 Sep 2024"],
                ["C6", "Energisation for export and 7-day reliability run", "30 Sep - 7 Oct 2024"],
            ]),
            H2("2. Hold points"),
            P("""Northwind witnesses every stage. No stage starts until the previous stage's test sheets are
            signed by Priya Sandhu and the Halden commissioning manager. Stage C3 requires an HV switching
            programme approved by a Northwind Authorised Person."""),
            H2("3. Acceptance criteria"),
            UL([
                "Usable energy at point of connection >= 10.0 MWh at 0.5C, 25 °C ambient.",
                "Round-trip efficiency >= 86%.",
                "Cell temperatures within 15-35 °C throughout C2 cycling; no container de-rating.",
                "Export limitation response under 1 second in all C4 test cases.",
            ]),
            H2("4. Safety"),
            P("""An emergency response plan for the BESS compound is in place from stage C0. Any BMS thermal
            alarm stops testing and is reported as an incident. Only Halden and Northwind staff with the site
            induction may enter the compound during testing."""),
        ]],
    ),
    # =========================================================================================
    # Project Heron (2022)
    # =========================================================================================
    Doc(
        f"{HERON}/2022/Heron-Blade-Repair-Summary.docx",
        D(2022, 10, 12),
        "Project Heron - Blade Leading-Edge Repair Campaign Summary",
        SITE_A_MGR,
        subject="Project Heron final summary",
        keywords="Project Heron; blades; leading edge erosion; Brackenridge",
        pages=[[
            H1("Project Heron - Blade Leading-Edge Repair Campaign: Summary"),
            META([
                ("Prepared by", f"{SITE_A_MGR}, Site Manager, Brackenridge"),
                ("Date", "12 October 2022"),
                ("Budget", "£310,000 (FY2022 operating budget)"),
                ("Outturn", "£296,750"),
            ]),
            H2("Background"),
            P(f"""The April 2022 drone inspection at {SITE_A} found category 3 or worse leading-edge erosion on
            30 of the 36 blades (16 of them category 4 or 5; see Heron-Inspection-Findings.csv). Erosion of this severity reduces annual energy production by an estimated 1.5 to 2.5%.
            Project Heron repaired and protected the leading edges of all 36 blades in the 2022 summer season."""),
            H2("Work done"),
            UL([
                "Rope-access repair of erosion damage and application of a polyurethane leading-edge protection (LEP) shell to the outer 12 m of each blade.",
                "36 blades on 12 turbines, 16 May to 9 September 2022, by the contractor Skyline Blade Services.",
                "Average downtime 3.2 days per turbine; total 38 turbine-days.",
                "Post-repair drone inspection of all blades, 20-22 September 2022.",
            ]),
            H2("Results"),
            P("""Power-curve analysis for October 2022 indicates an energy gain of 1.9% compared with the
            pre-repair baseline, worth about £118,000 per year at Brackenridge. Payback is under 3 years. Two
            minor incidents occurred: one dropped-object near miss during a service (IR-2022-003, not related
            to Heron work) and one weather stand-down."""),
            H2("Recommendations"),
            UL([
                "Annual drone inspection at Brackenridge; repeat LEP application expected around 2030.",
                "Survey Carrow Moor blades in 2023 (newer turbines, lower erosion expected).",
                "Add blade down-conductor continuity tests to the annual inspection.",
            ]),
        ]],
    ),
]
